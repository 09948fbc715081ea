import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { ClusterObservation, UpgradePlan } from '../../src/kv/cluster/types.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import type { StartSettings } from '../../src/kv/drivers/start-settings.js';
import { journalPath, newJournal, writeJournal, type Journal } from '../../src/kv/journal/journal.js';
import type { JournalWithRuns, TrialProof } from '../../src/kv/journal/runs.js';
import { onTargetOf, PROOF_REUSE_MS, proofsOf, recordedProofs } from '../../src/kv/ladder/proofs.js';
import { dataKey, hopDataTrials, type TrialHop } from '../../src/kv/trial/hops.js';
import { fingerprint, fingerprintDigest, runTrials, type TrialFinding } from '../../src/kv/trial/run.js';
import { gateBeforeStop } from '../../src/kv/upgrade/steps.js';

/**
 * What a resume need not try again (ladder/proofs.ts): a member on the hop's target, and a passed trial
 * the run it resumes recorded — only the same run's, the same hop's and binary's, on the settings read now,
 * at most PROOF_REUSE_MS old, its age never renewed. And the gate of a stop the record says began: a member
 * on its way down from it is stopped again when the others are healthy.
 */
const HOP: TrialHop = { name: '3.5 → 3.6', to: '3.6', binDir: '/opt/etcd-3.6', release: '3.6.16' };
const members: MemberSpec[] = ['m1', 'm2', 'm3'].map((name, i) => ({ name, endpoint: `http://127.0.0.1:${2379 + i * 10}` }));
const settings = (name: string, extra = ''): StartSettings => ({
  program: ['/opt/etcd-3.6/etcd'],
  args: ['--name', name, ...(extra ? [extra] : [])],
  env: {},
  from: { args: 'pid 1', env: 'pid 1' },
});
/** A driver whose settings reads answer from `now` and whose host runs nothing (a trial that starts fails the test). */
function driver(now: Record<string, StartSettings>): MemberDriver & { shells: number } {
  const d = {
    type: 'command',
    shells: 0,
    startSettings: (m: MemberSpec) => Promise.resolve(now[m.name] ?? { why: 'unread' }),
    hostShell: () => {
      d.shells++;
      return Promise.reject(new Error('no trial may start here'));
    },
  };
  return d as unknown as MemberDriver & { shells: number };
}

const plan: UpgradePlan = {
  source: '3.5',
  target: '3.6',
  clusterVersion: '3.5',
  members: members.map((m, i) => ({
    name: m.name,
    id: String(i + 1),
    endpoint: m.endpoint,
    fromVersion: '3.5.35',
    action: 'upgrade',
    reason: '',
    wasLeader: i === 2,
  })),
};

let dir: string;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

/** A journal of the run a resume finds (running unless `status`), with these proofs. */
async function recorded(proofs: TrialProof[], status: Journal['status'] = 'running', createdAt = 0): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'kv-proofs-'));
  const j = newJournal('k', plan, {}, { allowSameVersion: false, now: createdAt }) as JournalWithRuns;
  j.status = status;
  j.proofs = proofs;
  await writeJournal(journalPath(dir, 'k'), j, createdAt);
  return dir;
}

const proof = (member: string, rule: TrialProof['rule'], at: number, over: Partial<TrialProof> = {}): TrialProof => ({
  hop: HOP.name,
  member,
  rule,
  at: new Date(at).toISOString(),
  fingerprint: fingerprintDigest(fingerprint(settings(member))),
  binDir: HOP.binDir,
  release: HOP.release,
  detail: `etcd 3.6.16 started (${rule})`,
  ...over,
});

describe('a resume stands on its own run’s passed trials (ladder/proofs.ts)', () => {
  const T = Date.parse('2026-01-01T10:00:00Z');
  const opts = (d: MemberDriver, now: number) => ({ dataDir: dir, cluster: { key: 'k', members }, driver: d, now: () => now });

  it('takes a verdict of the same hop, binary and settings at most PROOF_REUSE_MS old, with its own time; the data verdict only on the settings read now', async () => {
    await recorded([proof('m1', 'trial-start', T), proof('m1', 'data-trial', T), proof('m2', 'data-trial', T)]);
    const d = driver({ m1: settings('m1'), m2: settings('m2', '--changed') });
    const found = await recordedProofs(opts(d, T + 60_000), [HOP], new Map());
    const start = found.get(HOP.name)!;
    expect(start.map((f) => [f.member, f.kept, f.at])).toEqual([['m1', 'journal', new Date(T).toISOString()]]);
    expect(start[0]!.detail).toMatch(/not run again: passed 60 s ago in the run this one resumes, kept in its journal; the same binary and settings/);
    // m2's settings changed since its data trial: it is tried again; m1's stand (with the fingerprint of the settings read now)
    expect(found.get(dataKey(HOP.name))!.map((f) => [f.member, f.fingerprint])).toEqual([['m1', fingerprint(settings('m1'))]]);
    expect(d.shells).toBe(0);
  });

  it('takes none older than PROOF_REUSE_MS, of another binary or release, of the member the run left down, of a finished run, or older than the ladder', async () => {
    const at = T - PROOF_REUSE_MS - 1;
    await recorded([
      proof('m1', 'trial-start', at),
      proof('m2', 'trial-start', T, { binDir: '/opt/other' }),
      proof('m3', 'trial-start', T, { release: '3.6.15' }),
    ]);
    expect((await recordedProofs(opts(driver({}), T + 1), [HOP], new Map())).size).toBe(0);
    await recorded([proof('m1', 'trial-start', T)]);
    expect((await recordedProofs(opts(driver({}), T + 1), [HOP], new Map(), { except: 'm1' })).size).toBe(0);
    expect((await recordedProofs(opts(driver({}), T + 1), [HOP], new Map(), { since: new Date(T).toISOString() })).size).toBe(0);
    expect((await recordedProofs(opts(driver({}), T + 1), [HOP], new Map())).get(HOP.name)).toHaveLength(1);
    await recorded([proof('m1', 'trial-start', T)], 'done');
    expect((await recordedProofs(opts(driver({}), T + 1), [HOP], new Map())).size).toBe(0);
  });

  it('records passed trials with the settings’ digest and the trial’s own time, never a member on the target, never a reuse’s words twice', () => {
    const fp = fingerprint(settings('m1'));
    const trials = new Map<string, TrialFinding[]>([
      [
        HOP.name,
        [
          { member: 'm1', hop: HOP.name, result: 'ok', detail: 'started', fingerprint: fp, at: 'A' },
          { member: 'm2', hop: HOP.name, result: 'ok', detail: 'runs etcd 3.6.16 already', fingerprint: fp, at: 'B', kept: 'on-target' },
          { member: 'm3', hop: HOP.name, result: 'problem', detail: 'exited', fingerprint: fp, at: 'C' },
        ],
      ],
      [
        dataKey(HOP.name),
        [
          {
            member: 'm1',
            hop: HOP.name,
            result: 'ok',
            detail: 'same hash (not run again: passed 9 s ago in the run this one resumes, kept)',
            fingerprint: fp,
            at: 'A',
          },
        ],
      ],
    ]);
    const out = proofsOf(trials, [{ from: '3.5', to: '3.6', patch: false }], { '3.6': { dir: HOP.binDir, version: HOP.release } });
    expect(out).toEqual([
      {
        hop: HOP.name,
        member: 'm1',
        rule: 'trial-start',
        at: 'A',
        fingerprint: fingerprintDigest(fp),
        binDir: HOP.binDir,
        release: HOP.release,
        detail: 'started',
      },
      {
        hop: HOP.name,
        member: 'm1',
        rule: 'data-trial',
        at: 'A',
        fingerprint: fingerprintDigest(fp),
        binDir: HOP.binDir,
        release: HOP.release,
        detail: 'same hash',
      },
    ]);
    expect(JSON.stringify(out)).not.toContain('--name');
  });
});

describe('a member on the hop’s target is not tried', () => {
  const seen = {
    members: [
      { name: 'm1', serverVersion: '3.6.16' },
      { name: 'm2', serverVersion: '3.5.35' },
    ],
    alarms: [],
  } as unknown as ClusterObservation;
  const onTarget = onTargetOf(seen);

  it('on the hop’s target minor, never on a patch hop or a restart on the same version', () => {
    expect(onTarget('m1', HOP)).toBe('etcd 3.6.16');
    expect(onTarget('m2', HOP)).toBeUndefined();
    expect(onTarget('m1', { ...HOP, name: '3.6 → 3.6 (patch)' })).toBeUndefined();
    expect(onTarget('m1', { ...HOP, running: true })).toBeUndefined();
  });

  it('its settings are read for the rules, no trial starts; a recorded verdict (its digest) stands on the same settings', async () => {
    const d = driver({ m1: settings('m1'), m2: settings('m2') });
    const prior = new Map([
      [
        `${HOP.name}\0m2`,
        {
          member: 'm2',
          hop: HOP.name,
          result: 'ok' as const,
          detail: 'kept',
          fingerprint: fingerprintDigest(fingerprint(settings('m2'))),
          kept: 'journal' as const,
        },
      ],
    ]);
    const jobs = ['m1', 'm2'].map((n) => ({
      hop: HOP.name,
      member: members.find((m) => m.name === n)!,
      target: { version: '3.6', binDir: HOP.binDir },
      release: HOP.release,
    }));
    const [m1, m2] = await runTrials([{ ...jobs[0]!, onTarget: 'etcd 3.6.16' }, jobs[1]!], { driver: d, timeoutS: 5, prior });
    expect(m1).toMatchObject({ result: 'ok', kept: 'on-target', fingerprint: fingerprint(settings('m1')) });
    expect(m1!.detail).toMatch(/runs etcd 3\.6\.16 already, the hop's target/);
    expect(m1!.settings?.list.some((s) => s.key === 'name')).toBe(true);
    expect(m2).toMatchObject({ result: 'ok', kept: 'journal', detail: 'kept', fingerprint: fingerprint(settings('m2')) });
    expect(d.shells).toBe(0);
  });

  it('its data trial is not run: a finding that says so', async () => {
    const d = driver({ m1: settings('m1') });
    const found = await hopDataTrials({ driver: d, members: [members[0]!], timeoutS: 5, onTarget }, [HOP]);
    expect(found.get(dataKey(HOP.name))).toMatchObject([{ member: 'm1', result: 'ok', kept: 'on-target' }]);
    expect(d.shells).toBe(0);
  });
});

describe('the gate of a stop the record says began (a kill right after the stop command)', () => {
  const obs = (m1Healthy: boolean, m3Healthy = true): ClusterObservation => ({
    members: members.map((m, i) => {
      const up = i === 0 ? m1Healthy : i === 2 ? m3Healthy : true;
      return {
        name: m.name,
        id: String(i + 1),
        endpoint: m.endpoint,
        reachable: up,
        healthy: up,
        healthDetail: up ? 'ok' : 'unreachable',
        ...(up ? { leaderId: '3' } : {}),
      };
    }),
    alarms: [],
  });
  const list = members.map((m, i) => ({ id: String(i + 1), name: m.name, peerUrls: [], clientUrls: [m.endpoint] }));
  const env = { o: {}, membership: list } as unknown as Parameters<typeof gateBeforeStop>[0];

  it('passes when only that member does not answer (it is on its way down); a first stop, or another member down, still refuses', async () => {
    await expect(gateBeforeStop(env, members[0]!, { obs: obs(false), list }, { resumed: true })).resolves.toBeDefined();
    await expect(gateBeforeStop(env, members[0]!, { obs: obs(false), list })).rejects.toThrow(/not stopping m1: m1 is not healthy/);
    await expect(gateBeforeStop(env, members[0]!, { obs: obs(false, false), list }, { resumed: true })).rejects.toThrow(/not stopping m1: m3 is not healthy/);
    await expect(gateBeforeStop(env, members[0]!, { obs: obs(true), list }, { resumed: true })).resolves.toBeDefined();
  });
});

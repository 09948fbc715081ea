import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OpsError } from '../../src/core/errors.js';
import { clusterKey, newJournal, type Journal, type JournalStep, type StepStatus } from '../../src/kv/journal/journal.js';
import { checkJournalPlan, JournalPlanInvalid } from '../../src/kv/journal/plan.js';
import { JournalInvalid, readJournal } from '../../src/kv/journal/read.js';
import { MEMBER_STEPS, type UpgradePlan } from '../../src/kv/cluster/types.js';
import { BIN, PAUSED } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * Journals checked against their plan: a seeded fuzz over mutations of real and synthetic journals
 * (drop, duplicate, reorder, retype each step's kind and status; drop, duplicate, rename, skip each
 * member; an extra member; no steps). Every case is either refused (JournalInvalid or
 * JournalPlanInvalid: the file, the member and step named, the fix given) or accepted exactly when a
 * run could have left that journal (an independent model of the executor's states); never another
 * error. The bulk drives the reader and validator directly; a representative subset goes through the
 * built binary's resume against a simulated 3-member sandbox stopped mid-upgrade: refused with the
 * cluster untouched (same processes, same versions, the journal byte for byte), or resumed to a
 * healthy cluster on 3.3.
 */

type Mutation = { name: string; kind: 'structure' | 'status' | 'benign'; member?: string; step?: string; apply: (j: Journal) => Journal };

/** mulberry32: a small seeded PRNG (the cases are the same on every run). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const clone = (j: Journal): Journal => JSON.parse(JSON.stringify(j)) as Journal;
const STATUSES: StepStatus[] = ['pending', 'running', 'done', 'failed', 'skipped'];
const KINDS = [...MEMBER_STEPS, 'wait-cluster-version', 'final-health'] as const;

/** Every mutation of `base` (the fuzz samples from these). */
function mutations(base: Journal, rnd: () => number): Mutation[] {
  const out: Mutation[] = [];
  const n = base.steps.length;
  base.steps.forEach((s, i) => {
    const at = { member: s.member, step: s.id };
    out.push({ name: `drop ${s.id}`, kind: 'structure', ...at, apply: (j) => ({ ...j, steps: j.steps.filter((_, k) => k !== i) }) });
    out.push({
      name: `duplicate ${s.id}`,
      kind: 'structure',
      ...at,
      apply: (j) => ({ ...j, steps: [...j.steps.slice(0, i + 1), { ...j.steps[i]! }, ...j.steps.slice(i + 1)] }),
    });
    if (i + 1 < n) {
      out.push({
        name: `swap ${s.id} and ${base.steps[i + 1]!.id}`,
        kind: 'structure',
        ...at,
        apply: (j) => {
          const steps = [...j.steps];
          [steps[i], steps[i + 1]] = [steps[i + 1]!, steps[i]!];
          return { ...j, steps };
        },
      });
    }
    const to = Math.floor(rnd() * n);
    if (to !== i && to !== i + 1 && to !== i - 1) {
      out.push({
        name: `move ${s.id} to position ${to + 1}`,
        kind: 'structure',
        ...at,
        apply: (j) => {
          const steps = j.steps.filter((_, k) => k !== i);
          steps.splice(to, 0, j.steps[i]!);
          return { ...j, steps };
        },
      });
    }
    const kind = KINDS.filter((k) => k !== s.kind)[Math.floor(rnd() * (KINDS.length - 1))]!;
    out.push({
      name: `retype ${s.id} as ${kind}`,
      kind: 'structure',
      ...at,
      apply: (j) => ({ ...j, steps: j.steps.map((x, k) => (k === i ? { ...x, kind } : x)) }),
    });
    for (const status of STATUSES.filter((x) => x !== s.status)) {
      out.push({
        name: `status of ${s.id} ${s.status} → ${status}`,
        kind: 'status',
        ...at,
        apply: (j) => ({ ...j, steps: j.steps.map((x, k) => (k === i ? { ...x, status } : x)) }),
      });
    }
  });
  base.members.forEach((m, i) => {
    const at = { member: m.name };
    const others = (j: Journal) => j.members.filter((_, k) => k !== i);
    out.push({ name: `drop member ${m.name} (its steps kept)`, kind: 'structure', ...at, apply: (j) => ({ ...j, members: others(j) }) });
    out.push({
      name: `drop member ${m.name} and its steps`,
      kind: 'structure',
      ...at,
      apply: (j) => ({ ...j, members: others(j), steps: j.steps.filter((s) => s.member !== m.name) }),
    });
    out.push({ name: `duplicate member ${m.name}`, kind: 'structure', ...at, apply: (j) => ({ ...j, members: [...j.members, { ...m }] }) });
    out.push({
      name: `rename member ${m.name} to kv9 (its steps too)`,
      kind: 'structure',
      ...at,
      apply: (j) => ({
        ...j,
        members: j.members.map((x) => (x.name === m.name ? { ...x, name: 'kv9' } : x)),
        steps: j.steps.map((s) => (s.member === m.name ? { ...s, member: 'kv9', id: `kv9/${s.kind}` } : s)),
      }),
    });
    if (m.action !== 'skip') {
      out.push({
        name: `member ${m.name} skipped by the plan`,
        kind: 'structure',
        ...at,
        apply: (j) => ({ ...j, members: j.members.map((x, k) => (k === i ? { ...x, action: 'skip' } : x)) }),
      });
      out.push({
        name: `member ${m.name} restarted instead of upgraded`,
        kind: 'benign',
        ...at,
        apply: (j) => ({ ...j, members: j.members.map((x, k) => (k === i ? { ...x, action: x.action === 'upgrade' ? 'restart' : 'upgrade' } : x)) }),
      });
    }
  });
  out.push({
    name: 'an extra member kv9 with every step',
    kind: 'structure',
    member: 'kv9',
    apply: (j) => ({
      ...j,
      members: [...j.members, { ...j.members[0]!, name: 'kv9', id: '99' }],
      steps: [...MEMBER_STEPS.map((k): JournalStep => ({ id: `kv9/${k}`, member: 'kv9', kind: k, status: 'pending' })), ...j.steps],
    }),
  });
  out.push({ name: 'steps: []', kind: 'structure', apply: (j) => ({ ...j, steps: [] }) });
  out.push({ name: 'no snapshot step', kind: 'structure', apply: (j) => ({ ...j, steps: j.steps.filter((s) => s.kind !== 'snapshot') }) });
  return out;
}

/**
 * The model: the journals a run can leave, written as the executor behaves (independently of the
 * validator's code). Per member, in plan order: done steps (the backup may be skipped), then at most
 * one step pending/running/failed, then pending ones (a skipped backup among them where that step is the stop or
 * the wait for it: the cycle marks the backup skipped as it begins); at most one member between stop and a
 * finished start; the cluster's steps only once every member is done, final health after the
 * cluster version.
 */
function runCouldLeave(j: Journal): boolean {
  const upgrading = j.members.filter((m) => m.action !== 'skip').map((m) => m.name);
  let down = 0;
  let allDone = true;
  for (const n of upgrading) {
    const v = MEMBER_STEPS.map((k) => j.steps.find((s) => s.id === `${n}/${k}`)!.status);
    let i = 0;
    while (i < v.length && (v[i] === 'done' || (v[i] === 'skipped' && MEMBER_STEPS[i] === 'backup-data'))) i++;
    if (i < v.length && !['pending', 'running', 'failed'].includes(v[i]!)) return false;
    // (the backup is marked skipped as the member's cycle begins: a run killed in its stop, or the wait for it, leaves it so)
    const inCycle = MEMBER_STEPS[i] === 'stop' || MEMBER_STEPS[i] === 'wait-stopped';
    if (v.slice(i + 1).some((x, k) => x !== 'pending' && !(inCycle && x === 'skipped' && MEMBER_STEPS[i + 1 + k] === 'backup-data'))) return false;
    if (i < v.length) allDone = false;
    if (v[1] !== 'pending' && v[4] !== 'done') down++;
  }
  const cv = j.steps.find((s) => s.kind === 'wait-cluster-version')!.status;
  const fh = j.steps.find((s) => s.kind === 'final-health')!.status;
  if (cv === 'skipped' || fh === 'skipped') return false;
  if (cv !== 'pending' && !allDone) return false;
  if (fh !== 'pending' && cv !== 'done') return false;
  return down <= 1;
}

const plan: UpgradePlan = {
  source: '3.2',
  target: '3.3',
  clusterVersion: '3.2',
  members: ['kv1', 'kv2', 'kv3'].map((name, i) => ({
    name,
    id: String(i + 1),
    endpoint: `http://127.0.0.1:${2379 + i}`,
    fromVersion: '3.2.32',
    action: 'upgrade' as const,
    reason: '',
    wasLeader: i === 2,
  })),
};

/** Synthetic journals a run could leave: `done` steps done in order, then the next one in `at`. */
function synthetic(done: number, at: StepStatus): Journal {
  const j = newJournal('k', plan, { kv1: { version: '3.2' }, kv2: { version: '3.2' }, kv3: { version: '3.2' } }, { allowSameVersion: false, now: 0 });
  j.status = 'halted';
  j.steps.forEach((s, i) => {
    if (i < done) s.status = 'done';
    else if (i === done) s.status = at;
  });
  return j;
}

/** Reads `j` from a file as a resume would, then checks it against its plan: the error, or undefined when accepted. */
function verdict(file: string, j: Journal, cluster = ['kv1', 'kv2', 'kv3']): Error | undefined {
  writeFileSync(file, JSON.stringify(j));
  try {
    const back = readJournal(file)!;
    checkJournalPlan(
      file,
      back,
      cluster.map((name) => ({ name })),
      'opsctl kv rollback --cluster prod.yaml',
    );
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

describe('journal fuzz: the reader and the plan check (seeded, several hundred mutations)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-journal-fuzz-'));
  const file = join(dir, 'journal.json');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('each mutation is refused naming the file, member and step with the fix, or accepted exactly when a run could leave it', () => {
    const rnd = prng(27);
    const bases = [
      synthetic(0, 'pending'),
      synthetic(3, 'running'),
      synthetic(7, 'failed'),
      synthetic(11, 'running'),
      synthetic(21, 'pending'),
      synthetic(22, 'failed'),
    ];
    const all = bases.flatMap((b) => mutations(b, rnd).map((m) => ({ base: b, m })));
    // A seeded sample of several hundred (every structural one of the first bases, a share of the rest).
    const cases = all.filter((_, i) => i < 300 || rnd() < 0.35);
    const tally = { refused: 0, accepted: 0 };
    for (const { base, m } of cases) {
      const mutated = m.apply(clone(base));
      const err = verdict(file, mutated);
      const what = `${m.name} (base: ${base.steps.filter((s) => s.status === 'done').length} steps done)`;
      if (err) {
        tally.refused++;
        expect(err, `${what}: ${err.message}`).toBeInstanceOf(OpsError);
        expect(err instanceof JournalInvalid || err instanceof JournalPlanInvalid, what).toBe(true);
        expect((err as OpsError).exitCode).toBe(1);
        expect(err.message, what).toContain(file);
        expect((err as OpsError).hint, what).toContain(`mv ${file} ${file}.bad`);
        if (err instanceof JournalPlanInvalid) {
          expect((err as OpsError).hint, what).toContain('opsctl kv rollback --cluster prod.yaml');
          expect(err.message, what).toMatch(/member kv\d|kv\d\/|cluster\//);
        }
      } else {
        tally.accepted++;
      }
      if (m.kind === 'structure') expect(err, `${what} must be refused`).toBeDefined();
      if (m.kind === 'benign') expect(err, `${what} must be accepted: ${err?.message}`).toBeUndefined();
      if (m.kind === 'status') expect(Boolean(err), `${what}: ${err?.message ?? 'accepted'}`).toBe(!runCouldLeave(mutated));
      // A dropped step is named with its member and kind.
      if (m.name.startsWith('drop ') && m.step && err instanceof JournalPlanInvalid) {
        const kind = m.step.split('/')[1]!;
        expect(err.message, what).toContain(`"${kind}"`);
        expect(err.message, what).toContain(m.member ? `member ${m.member}` : 'the cluster');
      }
    }
    expect(cases.length).toBeGreaterThan(400);
    process.stderr.write(`[kv journal fuzz] ${cases.length} mutations: ${tally.refused} refused, ${tally.accepted} accepted\n`);
  });

  it("the issue's case: a member's start step missing is refused naming the member and the step", () => {
    const j = synthetic(9, 'running'); // kv2 stopped, its backup running
    const err = verdict(file, { ...j, steps: j.steps.filter((s) => s.id !== 'kv2/start') });
    expect(err).toBeInstanceOf(JournalPlanInvalid);
    expect(err!.message).toContain(`the kv upgrade journal ${file} does not match its plan: member kv2 has no "start" step (kv2/start)`);
  });
});

/** A simulated sandbox, stopped mid-upgrade: one member done, the second started (its start recorded), the third untouched. */
function midUpgrade() {
  const cfg = tempConfigDir('opsctl-journal-fuzz-e2e-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env, extendEnv: true, timeout: 240_000 });
  const sandbox = () =>
    JSON.parse(readFileSync(join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8')) as {
      members: Array<{ name: string; pidFile: string; endpoint: string }>;
    };
  const journals = join(cfg.dir, 'data', 'kv', 'journals');
  // The sandbox's cluster (a new sandbox has new ports: a new key).
  const journalFile = () => join(journals, `${clusterKey(sandbox().members.map((m) => m.endpoint))}.json`);
  let c: SimulatedTestCluster | undefined;
  return {
    cfg,
    opsctl,
    journalFile,
    async setUp(): Promise<Journal> {
      await c?.destroy();
      rmSync(journals, { recursive: true, force: true });
      c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: cfg.dir, extra: ['--timeout', '120s'] });
      const child = execa(process.execPath, [PAUSED, 'kv', 'upgrade', '--to', '3.3', '--yes', '--settle', '0s', '--poll-interval', '100ms'], {
        reject: false,
        env: { ...env, OPSCTL_PAUSE: 'pause:after-record:#2' },
        extendEnv: true,
        timeout: 240_000,
      });
      let err = '';
      await new Promise<void>((res) => {
        child.stderr?.on('data', (b: Buffer) => {
          err += String(b);
          if (/opsctl-test: kv\d after-record/.test(err)) res();
        });
        void child.then(() => res());
      });
      expect(err).toMatch(/opsctl-test: kv\d after-record/);
      child.kill('SIGKILL');
      await child;
      return JSON.parse(readFileSync(journalFile(), 'utf8')) as Journal;
    },
    /**
     * What a refusal must leave as it was: each member's PID file, and the versions, read once every member answers
     * its version (the member started just before the kill may still be coming up: a moment's read is not the state).
     */
    async state(): Promise<string> {
      const pids = sandbox().members.map((m) => `${m.name}:${readFileSync(m.pidFile, 'utf8').trim()}`);
      const deadline = Date.now() + 120_000;
      for (;;) {
        const r = await opsctl('kv', 'version', '--json');
        const v = (r.exitCode === 0 ? JSON.parse(String(r.stdout)) : []) as Array<{ name: string; server: string | null }>;
        if ((v.length === pids.length && v.every((x) => x.server)) || Date.now() > deadline) {
          return JSON.stringify({ pids, versions: v.map((x) => `${x.name}:${x.server}`) });
        }
        await new Promise((res) => setTimeout(res, 250));
      }
    },
  };
}

describe('journal fuzz through the real resume (the built binary, a simulated sandbox mid-upgrade)', () => {
  const box = midUpgrade();
  afterAll(async () => {
    await box.opsctl('kv', 'sandbox', 'down');
    box.cfg.cleanup();
  }, 300_000);
  const resume = () => box.opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--settle', '0s', '--poll-interval', '100ms');

  it('a representative subset: each refused before any change (exit 1, the file, member and step named, the fix), the cluster untouched; never "unexpected error"', async () => {
    const j0 = await box.setUp();
    const order = j0.members.map((m) => m.name);
    const done = order.find((n) => j0.steps.filter((s) => s.member === n).every((s) => s.status === 'done'))!;
    const started = order.find((n) => j0.steps.find((s) => s.id === `${n}/start`)?.status === 'running')!;
    const untouched = order.find((n) => n !== done && n !== started)!;
    expect([done, started, untouched].every(Boolean), JSON.stringify(j0.steps)).toBe(true);
    const all = mutations(j0, prng(4));
    const pick = (name: string) => {
      const m = all.find((x) => x.name === name);
      expect(m, name).toBeDefined();
      return m!;
    };
    const subset = [
      pick(`drop ${started}/start`),
      pick(`drop ${done}/snapshot`),
      pick('steps: []'),
      pick('an extra member kv9 with every step'),
      pick(`duplicate ${started}/stop`),
      pick(`swap ${untouched}/stop and ${untouched}/wait-stopped`),
      pick(`retype ${done}/settle as ${all.find((x) => x.name.startsWith(`retype ${done}/settle as `))!.name.split(' as ')[1]}`),
      pick(`status of ${untouched}/start pending → done`),
      pick('status of cluster/final-health pending → done'),
      pick(`drop member ${untouched} (its steps kept)`),
      pick(`drop member ${untouched} and its steps`),
      pick(`member ${done} skipped by the plan`),
      pick(`rename member ${untouched} to kv9 (its steps too)`),
      pick(`duplicate member ${done}`),
      pick(`status of ${started}/backup-data done → pending`),
      pick('no snapshot step'),
      // And a seeded few of the rest that a resume must refuse.
      ...all.filter((m) => m.kind === 'structure').filter((_, i) => i % 37 === 5),
    ];
    const before = await box.state();
    const file = box.journalFile();
    for (const m of subset) {
      const text = JSON.stringify(m.apply(clone(j0)), null, 2);
      writeFileSync(file, text);
      const r = await resume();
      const err = String(r.stderr);
      expect(r.exitCode, `${m.name}: ${err}`).toBe(1);
      expect(err, m.name).not.toMatch(/unexpected error/i);
      expect(err, m.name).toMatch(/does not match its plan|cannot be used/);
      expect(err, m.name).toContain(file);
      expect(err, m.name).toContain(`mv ${file} ${file}.bad`);
      if (/does not match its plan/.test(err)) expect(err, m.name).toContain('opsctl kv rollback');
      if (m.member) expect(err, m.name).toContain(m.member);
      expect(readFileSync(file, 'utf8'), `${m.name}: the journal was rewritten`).toBe(text);
      expect(await box.state(), `${m.name}: the cluster changed`).toBe(before);
    }
    process.stderr.write(`[kv journal fuzz e2e] ${subset.length} mutations through the real resume, each refused with the cluster untouched\n`);
  }, 600_000);

  it.each([
    ['the started member start running → failed', (j: Journal, n: { started: string; untouched: string }) => `status of ${n.started}/start running → failed`],
    [
      'the untouched member snapshot pending → done',
      (j: Journal, n: { started: string; untouched: string }) => `status of ${n.untouched}/snapshot pending → done`,
    ],
  ])(
    'accepted (%s): resumed to a healthy cluster on 3.3',
    async (_what, name) => {
      const j0 = await box.setUp();
      const order = j0.members.map((m) => m.name);
      const started = order.find((n) => j0.steps.find((s) => s.id === `${n}/start`)?.status === 'running')!;
      const untouched = order.find((n) => j0.steps.find((s) => s.id === `${n}/snapshot`)?.status === 'pending')!;
      const m = mutations(j0, prng(4)).find((x) => x.name === name(j0, { started, untouched }))!;
      expect(m).toBeDefined();
      writeFileSync(box.journalFile(), JSON.stringify(m.apply(clone(j0)), null, 2));
      const r = await resume();
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const v = JSON.parse(String((await box.opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string; cluster: string }>;
      expect(v.map((x) => x.server.slice(0, 3))).toEqual(['3.3', '3.3', '3.3']);
      expect((await box.opsctl('kv', 'health')).exitCode).toBe(0);
    },
    300_000,
  );
});

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderTemplate } from '../../src/kv/templates/argv.js';
import {
  clusterKey,
  isResumable,
  journalPath,
  lockJournal,
  memberInFlight,
  newJournal,
  startedMembers,
  touchedMembers,
  writeJournal,
} from '../../src/kv/journal/journal.js';
import { readJournal } from '../../src/kv/journal/read.js';
import { downMemberWords } from '../../src/commands/kv/lib/last-words.js';
import type { Context } from '../../src/context.js';
import { writeFileSync } from 'node:fs';
import type { UpgradePlan } from '../../src/kv/cluster/types.js';
import { verifyTrailer } from '../../src/kv/snapshot/save.js';
import { createHash } from 'node:crypto';

const plan: UpgradePlan = {
  source: '3.2',
  target: '3.3',
  clusterVersion: '3.2',
  members: [
    { name: 'm2', id: '2', endpoint: 'http://a', fromVersion: '3.2.32', action: 'upgrade', reason: '', wasLeader: false },
    { name: 'm3', id: '3', endpoint: 'http://b', fromVersion: '3.3.27', action: 'skip', reason: '', wasLeader: false },
    { name: 'm1', id: '1', endpoint: 'http://c', fromVersion: '3.2.32', action: 'upgrade', reason: '', wasLeader: true },
  ],
};

let dir: string;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('kv journal', () => {
  it('has every step of every member to upgrade, in plan order, then the final checks', () => {
    const j = newJournal('k', plan, {}, { allowSameVersion: false, now: 0 });
    expect(j.steps.map((s) => s.id)).toEqual([
      'm2/snapshot',
      'm2/stop',
      'm2/wait-stopped',
      'm2/backup-data',
      'm2/start',
      'm2/wait-healthy',
      'm2/settle',
      'm1/snapshot',
      'm1/stop',
      'm1/wait-stopped',
      'm1/backup-data',
      'm1/start',
      'm1/wait-healthy',
      'm1/settle',
      'cluster/wait-cluster-version',
      'cluster/final-health',
    ]);
    expect(j.steps.every((s) => s.status === 'pending')).toBe(true);
  });

  it('is written atomically and read back; knows what is in flight', async () => {
    dir = mkdtempSync(join(tmpdir(), 'kvj-'));
    const file = join(dir, 'j', 'x.json');
    const j = newJournal('k', plan, {}, { allowSameVersion: false, now: 0 });
    await writeJournal(file, j, 1000);
    expect(readdirSync(join(dir, 'j'))).toEqual(['x.json']); // no temp file left behind
    const back = readJournal(file)!;
    expect(back.steps).toHaveLength(16);
    expect(isResumable(back)).toBe(true);
    expect(memberInFlight(back)).toBeUndefined();
    back.steps[0]!.status = 'done';
    back.steps[1]!.status = 'done';
    back.steps[2]!.status = 'running';
    expect(memberInFlight(back)).toBe('m2');
    back.steps[4]!.status = 'done';
    expect(startedMembers(back)).toEqual(['m2']);
    // Roll-back also brings back a member that was stopped and never started.
    back.steps[4]!.status = 'pending';
    expect(startedMembers(back)).toEqual([]);
    expect(touchedMembers(back)).toEqual(['m2']);
  });

  it("the last words name the member left down, read through the journal's validated reader", async () => {
    dir = mkdtempSync(join(tmpdir(), 'kvj-'));
    const ctx = { paths: { data: dir }, commandLine: ['kv', 'upgrade', '--to', '3.3'] } as unknown as Context;
    const words = downMemberWords(ctx, 'k', 'opsctl kv rollback');
    expect(words()).toBeUndefined(); // no journal
    const file = journalPath(dir, 'k');
    const j = newJournal('k', plan, {}, { allowSameVersion: false, now: 0 });
    await writeJournal(file, j, 1000);
    expect(words()).toBeUndefined(); // nothing in flight
    j.steps[1]!.status = 'done';
    j.steps[2]!.status = 'running';
    await writeJournal(file, j, 1000);
    expect(words()).toBe(
      `m2 is down (stopped by this run, not started yet): \`opsctl kv upgrade --to 3.3\` brings it back and goes on, or \`opsctl kv rollback\` takes the cluster back (journal: ${file})`,
    );
    // a journal of the wrong shape is not trusted: nothing is said (the reader refuses it; a signal handler does not throw)
    writeFileSync(file, JSON.stringify({ ...j, members: 'm2' }));
    expect(words()).toBeUndefined();
    writeFileSync(file, '{"version":1,');
    expect(words()).toBeUndefined();
  });

  it('the lock lets one upgrade in at a time', async () => {
    dir = mkdtempSync(join(tmpdir(), 'kvj-'));
    const file = join(dir, 'x.json');
    const release = await lockJournal(file, 5000);
    await expect(lockJournal(file, 5000)).rejects.toMatchObject({ code: 'locked', message: expect.stringContaining(`the kv journal ${file} is locked`) });
    await release();
    expect(existsSync(`${file}.lock`)).toBe(false);
    await (
      await lockJournal(file, 5000)
    )();
  });

  it('cluster keys do not depend on endpoint order', () => {
    expect(clusterKey(['http://b', 'http://a'])).toBe(clusterKey(['http://a', 'http://b']));
  });
});

describe('command driver templates', () => {
  it('substitute into argv tokens: no shell, no injection', () => {
    // one argument whatever it holds (the driver refuses such a host before anything runs: cluster.ts), after ssh's --
    expect(renderTemplate('ssh {host} sudo systemctl stop etcd', { host: 'db1; rm -rf /' })).toEqual([
      'ssh',
      '--',
      'db1; rm -rf /',
      'sudo',
      'systemctl',
      'stop',
      'etcd',
    ]);
    expect(renderTemplate(`ssh {host} "sudo systemctl start etcd@{version}"`, { host: 'h', version: '3.3' })).toEqual([
      'ssh',
      '--',
      'h',
      'sudo systemctl start etcd@3.3',
    ]);
    expect(() => renderTemplate('x {nope}', {})).toThrow(/no value for \{nope\}/);
  });
});

describe('snapshot trailer', () => {
  it('accepts a file whose last 32 bytes are the SHA-256 of the rest, refuses a flipped byte', () => {
    const body = Buffer.alloc(512, 7);
    const file = Buffer.concat([body, createHash('sha256').update(body).digest()]);
    expect(() => verifyTrailer(file)).not.toThrow();
    file[3]! ^= 1;
    expect(() => verifyTrailer(file)).toThrow(/mismatch/);
  });
});

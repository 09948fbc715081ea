import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { clusterKey } from '../../src/kv/journal/journal.js';
import { runBin } from '../helpers/bin.js';
import { until } from '../helpers/kv.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '30s', '--stop-timeout', '20s', '--settle', '0s'];

/**
 * A journal an older opsctl wrote (the build of commit 24d0506, before the upgrade's members went through
 * the one member cycle, kv/upgrade/cycle.ts): a 3.2 → 3.3 upgrade killed (SIGKILL) right after the stop
 * of its first member, kv2. Its cluster, endpoints, member ids, directory and owner are placeholders,
 * filled with this sandbox's; kv2 is stopped as the kill left it. The identical command resumes it.
 */
const FIXTURE = new URL('../fixtures/kv-journal-24d0506-after-stop.json', import.meta.url);

let sb: KvSandbox;
beforeEach(async () => (sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox));
afterEach(() => sb.down());

describe('a journal written before the member cycle was shared (issue 44 item 3)', () => {
  it('an upgrade killed right after its first stop, journalled by the older opsctl, is finished by the identical command', async () => {
    const members = sb.spec().members;
    const status = (await sb.kv('status', '--json')).json<Array<{ name: string; id: string }>>();
    // a pid that is surely gone: the killed run's
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    let text = readFileSync(FIXTURE, 'utf8')
      .replaceAll('@DIR@', sb.dir)
      .replaceAll('@CLUSTER@', clusterKey(members.map((m) => m.endpoint)))
      .replaceAll('"@PID@"', String(gone))
      .replaceAll('@HOST@', hostname());
    for (const m of members) {
      const id = status.find((s) => s.name === m.name)!.id;
      text = text.replaceAll(`@${m.name}.endpoint@`, m.endpoint).replaceAll(`@${m.name}.id@`, BigInt(`0x${id}`).toString());
    }
    const old = JSON.parse(text);
    expect(text).not.toMatch(/@\w+(\.\w+)?@/);
    // the state the kill left: kv2's stop begun (and done: it is down), nothing after it
    expect(old.steps.find((s: any) => s.id === 'kv2/stop')).toMatchObject({ status: 'running' });
    expect(old.steps.filter((s: any) => s.status !== 'pending').map((s: any) => s.id)).toEqual(['kv2/snapshot', 'kv2/stop']);
    const kv2 = members.find((m) => m.name === 'kv2')!;
    const pid = Number(readFileSync(kv2.pidFile, 'utf8').trim());
    process.kill(pid, 'SIGTERM');
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(), 20_000, "kv2's process gone");
    const dir = join(sb.dir, 'data', 'kv', 'journals');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${old.cluster}.json`), text, { mode: 0o600 });

    const r = await runBin(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--json'], { env: sb.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    // the older run is named as the one resumed, kv2 the member it may find down
    expect(String(r.stderr)).toMatch(/Resuming the upgrade 3\.2 → 3\.3/);
    expect(String(r.stderr)).toMatch(/kv2: start 3\.3/);
    const report = JSON.parse(String(r.stdout));
    expect(report).toMatchObject({ status: 'done', resumed: true, run: old.id });
    // kv2's snapshot was not taken again; its stop found it down and was not run again
    const step = (id: string) => report.steps.find((s: any) => s.id === id);
    expect(step('kv2/snapshot').startedAt).toBe(old.steps.find((s: any) => s.id === 'kv2/snapshot').startedAt);
    expect(step('kv2/stop')).toMatchObject({ status: 'done', detail: 'not running' });
    expect(report.steps.every((s: any) => s.status === 'done')).toBe(true);
    const versions = (await sb.kv('version', '--json')).json<Array<{ server: string; cluster: string }>>();
    for (const v of versions) expect(v.cluster).toBe('3.3.0');
  }, 180_000);
});

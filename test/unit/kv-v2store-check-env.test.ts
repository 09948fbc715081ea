import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterSpec, MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { HostShellResult, MemberDriver } from '../../src/kv/drivers/driver.js';
import { checkV2store } from '../../src/kv/v2fix/v2store-check.js';

/**
 * etcdutl check v2store reads a live member's WAL beside that member on its host: it runs on one core
 * (GOMAXPROCS=1), the member keeps the others. Both ways it runs: here (the sandbox and local members), and
 * in the script the driver's trial template runs on each member's host.
 */
const root = mkdtempSync(join(tmpdir(), 'opsctl-v2check-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(join(root, 'etcdutl'), '');

const members: MemberSpec[] = ['kv1', 'kv2'].map((name, i) => ({ name, endpoint: `http://127.0.0.1:${2379 + 10 * i}` }));
const cluster: ClusterSpec = { source: 'file', key: 'k', members };
const OK = 'No custom content found in both v2store and WAL records.';

describe('etcdutl check v2store runs on one core beside the live member', () => {
  it('here: each member checked with GOMAXPROCS=1 in a clean environment', async () => {
    const calls: Array<{ file: string; args: string[]; env: Record<string, string> }> = [];
    const exec = ((file: string, args: string[], opts: { env: Record<string, string> }) => {
      calls.push({ file, args, env: opts.env });
      return Promise.resolve({ exitCode: 0, stdout: OK, stderr: '' });
    }) as unknown as typeof import('execa').execa;
    const driver = {
      type: 'local',
      dataDirs: (m: MemberSpec) => Promise.resolve({ dataDir: `/data/${m.name}` }),
      current: () => undefined,
    } as unknown as MemberDriver;
    const r = await checkV2store({ cluster, driver, exec }, { given: root });
    expect(r).toEqual(members.map((m) => ({ member: m.name, ok: true, detail: `etcdutl check v2store: ${OK}` })));
    expect(calls.map((c) => [c.args.join(' '), c.env])).toEqual(
      members.map((m) => [`check v2store --data-dir /data/${m.name}`, { PATH: '/usr/bin:/bin', GOMAXPROCS: '1' }]),
    );
  });

  it("on each member's host (the trial template's script): GOMAXPROCS=1 before the etcdutl beside the 3.5 binary there", async () => {
    const scripts: string[] = [];
    const driver = {
      type: 'command',
      hostShell: (_m: MemberSpec, script: string): Promise<HostShellResult> => {
        scripts.push(script);
        return Promise.resolve({ stdout: `${OK}\nopsctl-exit: 0\n` } as HostShellResult);
      },
      hostDataDirs: (m: MemberSpec) => Promise.resolve({ dataDir: `/var/lib/${m.name}`, walDir: `/wal/${m.name}` }),
      current: () => undefined,
    } as unknown as MemberDriver;
    const r = await checkV2store({ cluster, driver, exec: undefined as never }, { given: '/opt/etcd-3.5' });
    expect(r).toEqual(members.map((m) => ({ member: m.name, ok: true, detail: `etcdutl check v2store on its host: ${OK}` })));
    expect(scripts.map((s) => s.split('\n')[0])).toEqual(
      members.map((m) => `GOMAXPROCS=1 '/opt/etcd-3.5/etcdutl' check v2store --data-dir '/var/lib/${m.name}' --wal-dir '/wal/${m.name}' 2>&1`),
    );
  });
});

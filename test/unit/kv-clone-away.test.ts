import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { CloneReach, MemberTarget } from '../../src/kv/drivers/driver.js';
import { findAwayClone } from '../../src/kv/rehearsal/clone-away.js';
import { fetchedDir } from '../../src/kv/rehearsal/clone-find.js';
import { CLONE_RECORD } from '../../src/kv/rehearsal/clone-find.js';
import { fetchScript } from '../../src/kv/rehearsal/fetch.js';
import { dropMountPoints, makeMountPoints } from '../../src/kv/rehearsal/mount-points.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-clone-away-'));
const bin = (v: string) => {
  const f = join(root, `etcd-${v}`);
  writeFileSync(f, '');
  return f;
};
const bins = { '3.5': bin('3.5'), '3.6': bin('3.6'), '3.7': bin('3.7') };

const members: MemberSpec[] = [
  { name: 'kv1', endpoint: 'http://10.9.0.1:2379', host: '10.9.0.1' },
  { name: 'kv2', endpoint: 'http://10.9.0.2:2379', host: '10.9.0.2' },
];

/** Two hosts reached by `ssh HOST sh -s`, each member with the same paths (/var/lib/etcd, /etc/etcd/etcd.yaml), as real hosts have. */
function reach(over: Partial<CloneReach> = {}, args = ['--config-file', '/etc/etcd/etcd.yaml']): CloneReach & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    settings: true,
    here: () => false,
    running: (m) =>
      Promise.resolve({
        program: [bins['3.5']],
        exe: bins['3.5'],
        pid: m.name === 'kv1' ? 4101 : 4102,
        args,
        env: {},
        cwd: '/',
        config: { file: '/etc/etcd/etcd.yaml', text: 'data-dir: /var/lib/etcd\nname: x\n' },
        from: { args: 'pid on host (/proc)', env: 'pid on host (/proc)' },
      }),
    shell: (m, script) => {
      asked.push(`${m.name}: ${script.trim()}`);
      if (script.includes('--version')) return Promise.resolve({ stdout: '3.5.35\n', stderr: '', exitCode: 0 });
      return Promise.resolve({ stdout: '1048576\ttotal\n', stderr: '', exitCode: 0 });
    },
    reach: (m) => ['ssh', m.host!, 'sh', '-s'],
    versionSettings: (_m, t: MemberTarget) =>
      Promise.resolve(
        t.version === '3.7'
          ? { why: 'the settings template for 3.7 failed (exit 5): Unit etcd-3.7.service not found.' }
          : { args: ['--config-file', `/etc/etcd/${t.version}.yaml`], env: {}, from: { args: 'systemctl cat', env: 'systemctl cat' } },
      ),
    hostBinary: (v) => bins[v as keyof typeof bins],
    ...over,
  };
}

describe('members on other hosts cloned here (kv/rehearsal/clone-away.ts; issue kv-rehearse item 4)', () => {
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('fetches each member through its trial template: its PID, its data dir and the config files it and each later start name; the record holds what the clone cannot read', async () => {
    const r = reach();
    const c = await findAwayClone(members, r);
    if ('why' in c) throw new Error(c.why);
    expect(c.fetch).toEqual([
      { member: 'kv1', argv: ['ssh', '10.9.0.1', 'sh', '-s'], pid: 4101, paths: ['/var/lib/etcd', '/etc/etcd/etcd.yaml', '/etc/etcd/3.6.yaml'] },
      { member: 'kv2', argv: ['ssh', '10.9.0.2', 'sh', '-s'], pid: 4102, paths: ['/var/lib/etcd', '/etc/etcd/etcd.yaml', '/etc/etcd/3.6.yaml'] },
    ]);
    // the same paths on both hosts: one mount point each (each member has its own mounts in the clone)
    expect(c.mountPoints).toEqual(['/var/lib/etcd', '/etc/etcd/etcd.yaml', '/etc/etcd/3.6.yaml']);
    // their data dirs are on their hosts: never given as this machine's (the real run would read them here)
    expect(c.dirs).toBeUndefined();
    expect(c.bytes).toBe(2 * 1048576);
    expect(c.addresses).toEqual(['10.9.0.1/32', '10.9.0.2/32']);
    const rec = JSON.parse(c.files![CLONE_RECORD]!) as { members: Array<Record<string, unknown>> };
    expect(rec.members[0]).toMatchObject({
      name: 'kv1',
      version: '3.5',
      exe: bins['3.5'],
      dataDir: '/var/lib/etcd',
      fetched: ['/var/lib/etcd', '/etc/etcd/etcd.yaml', '/etc/etcd/3.6.yaml'],
      settings: {
        '3.6': { args: ['--config-file', '/etc/etcd/3.6.yaml'] },
        '3.7': { why: 'the settings template for 3.7 failed (exit 5): Unit etcd-3.7.service not found.' },
      },
    });
    // the size measured on each host, the preallocated WAL segment left out, every path one quoted word
    expect(r.asked.find((a) => a.startsWith('kv1: du'))).toBe(
      "kv1: du -sbc --exclude='[0-9]*.tmp' -- '/var/lib/etcd' '/etc/etcd/etcd.yaml' '/etc/etcd/3.6.yaml' 2>/dev/null | tail -n 1",
    );
  });

  it('refuses (the reason for the plan) a member with certificates, binaries not on this machine, a host not reached by a template', async () => {
    const tls = reach({}, ['--config-file', '/etc/etcd/etcd.yaml', '--cert-file', '/etc/etcd/server.crt']);
    expect(await findAwayClone(members, tls)).toEqual({
      why: 'kv1 runs with certificates, whose keys never leave its host unless you say so (--rehearsal-copy-keys brings them here for the clone, removed with it)',
    });
    const gone = reach({ hostBinary: (v) => (v === '3.7' ? '/opt/etcd-3.7/etcd' : undefined) });
    expect(await findAwayClone(members, gone)).toEqual({
      why: 'kv1: the clone runs its members on this machine, and /opt/etcd-3.7/etcd (its binaries on its host) is not here at the same path',
    });
    const none = reach({ reach: () => undefined });
    const why = await findAwayClone(members, none);
    expect(why).toEqual({ why: 'kv1: its host is not reached by a trial template (`ssh {host} sudo sh -s`), so its data cannot be brought here' });
  });

  it('--rehearsal-copy-keys: the certificate, key and CA files its flags, variables and config file name are brought with its data', async () => {
    const r = reach({ copyKeys: true }, [
      '--config-file',
      '/etc/etcd/etcd.yaml',
      '--peer-cert-file=/etc/etcd/peer.crt',
      '--peer-key-file',
      '/etc/etcd/peer.key',
      // (3.5's own client certificate, and a CRL: a clone member started without them is refused "no such file")
      '--peer-client-cert-file=/etc/etcd/peer-client.crt',
      '--client-crl-file=/etc/etcd/client.crl',
      '--peer-crl-file=/etc/etcd/peer.crl',
      // (not a file: never fetched)
      '--client-cert-auth=true',
    ]);
    const running = r.running.bind(r);
    r.running = async (m) => {
      const s = await running(m);
      if ('why' in s) return s;
      return {
        ...s,
        env: { ETCD_TRUSTED_CA_FILE: '/etc/etcd/ca.crt' },
        config: {
          file: '/etc/etcd/etcd.yaml',
          text: 'data-dir: /var/lib/etcd\nclient-transport-security:\n  cert-file: /etc/etcd/server.crt\n  key-file: /etc/etcd/server.key\n  client-cert-auth: true\n',
        },
      };
    };
    const c = await findAwayClone(members, r);
    if ('why' in c) throw new Error(c.why);
    expect(c.fetch![0]!.paths).toEqual([
      '/var/lib/etcd',
      '/etc/etcd/peer.crt',
      '/etc/etcd/peer.key',
      '/etc/etcd/peer-client.crt',
      '/etc/etcd/client.crl',
      '/etc/etcd/peer.crl',
      '/etc/etcd/ca.crt',
      '/etc/etcd/server.crt',
      '/etc/etcd/server.key',
      '/etc/etcd/etcd.yaml',
      '/etc/etcd/3.6.yaml',
    ]);
  });

  it("the host's script: the PID a number, each path one quoted word relative to /, the pause held until its input ends", () => {
    const s = fetchScript(4101, ['/var/lib/etcd', "/srv/it's here"]);
    expect(s).toContain('pid=4101\n');
    expect(s).toContain(`tar -C / -c -f - --sparse --exclude='*/wal/[0-9]*.tmp' -- 'var/lib/etcd' 'srv/it'\\''s here' || exit 4`);
    expect(s.trim().split('\n').slice(-2)).toEqual(['exec >&-', 'cat >/dev/null']);
    expect(s).toContain(`trap 'kill -CONT "$pid" 2>/dev/null' EXIT`);
    expect(() => fetchScript(1, ['/x'])).toThrow(/not a member's PID/);
    expect(fetchedDir('/data', 'kv1')).toBe('/data/rehearsal/fetched/kv1');
  });

  it('mount points missing here are made as the copy is (a directory, a file) and exactly what was made is removed after', async () => {
    const copy = join(root, 'copy');
    const place = join(root, 'here');
    mkdirSync(join(copy, place, 'var/lib/etcd/member'), { recursive: true });
    mkdirSync(join(copy, place, 'etc/etcd'), { recursive: true });
    writeFileSync(join(copy, place, 'etc/etcd/etcd.yaml'), 'name: kv1\n');
    mkdirSync(join(place, 'etc'), { recursive: true });
    writeFileSync(join(place, 'etc/keep'), "the operator's\n");
    const made = await makeMountPoints([join(place, 'var/lib/etcd'), join(place, 'etc/etcd/etcd.yaml')], [copy]);
    expect(made).toEqual([join(place, 'var'), join(place, 'var/lib'), join(place, 'var/lib/etcd'), join(place, 'etc/etcd'), join(place, 'etc/etcd/etcd.yaml')]);
    expect(statSync(join(place, 'var/lib/etcd')).isDirectory()).toBe(true);
    expect(statSync(join(place, 'etc/etcd/etcd.yaml')).isFile()).toBe(true);
    await dropMountPoints(made);
    expect(existsSync(join(place, 'var'))).toBe(false);
    expect(existsSync(join(place, 'etc/etcd'))).toBe(false);
    expect(readFileSync(join(place, 'etc/keep'), 'utf8')).toBe("the operator's\n");
  });
});

import { fakeSshScript } from '../helpers/fake-ssh.js';
import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { CommandDriver } from '../../src/kv/drivers/command.js';
import { renderTemplate } from '../../src/kv/templates/argv.js';
import { expandSystemd } from '../../src/kv/drivers/systemd.js';
import type { RestoreRequest } from '../../src/kv/drivers/driver.js';
import { seeded } from '../helpers/fuzz.js';

/**
 * Every driver template with hostile names, hosts, paths and snapshot names, run for real through a
 * FAKE ssh (first on the PATH: it logs its argv, runs a -oProxyCommand locally as real ssh would,
 * and runs its remote command with `sh -c`, the words joined by spaces, as sshd does). The programs
 * the templates mean to run are stand-ins that log their argv. Asserted: no marker file is ever
 * created (every payload touches one), and each program got exactly the intended argv.
 */
const T = mkdtempSync(join(tmpdir(), 'opsctl-tpl-fuzz-'));
const BIN = join(T, 'bin');
const LOG = join(T, 'log');
const M = join(T, 'm');
for (const d of [BIN, LOG, M]) mkdirSync(d);
afterAll(() => rmSync(T, { recursive: true, force: true }));

const REC = `#!/bin/sh
f="$REC_LOG/$(date +%s%N).$$"
{ printf '%s\\0' "$(basename "$0")"; for a in "$@"; do printf '%s\\0' "$a"; done; } >"$f"
`;
const SSH = fakeSshScript('kv-template-fuzz', `{ printf '%s\\0' ssh; for a in "$@"; do printf '%s\\0' "$a"; done; } >"$REC_LOG/$(date +%s%N).$$.ssh"`);
writeFileSync(join(BIN, 'rec'), REC);
writeFileSync(join(BIN, 'ssh'), SSH);
writeFileSync(join(BIN, 'sudo'), '#!/bin/sh\nexec "$@"\n');
for (const f of ['rec', 'ssh', 'sudo']) chmodSync(join(BIN, f), 0o755);
for (const p of ['systemctl', 'cp', 'mv', 'rm', 'ln', 'du', 'cat', 'chown', 'etcdctl', 'ls']) symlinkSync('rec', join(BIN, p));
const env = { PATH: `${BIN}:/usr/bin:/bin`, REC_LOG: LOG };

beforeEach(() => {
  for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
});

/** What ran, in order: [program, ...argv] of every stand-in (ssh's own argv apart). */
function ran(): { progs: string[][]; ssh: string[][] } {
  const files = readdirSync(LOG).sort((a, b) => (BigInt(a.split('.')[0]!) < BigInt(b.split('.')[0]!) ? -1 : 1));
  const all = files.map((f) => readFileSync(join(LOG, f)).toString('utf8').split('\0').slice(0, -1));
  return { progs: all.filter((a) => a[0] !== 'ssh'), ssh: all.filter((a) => a[0] === 'ssh') };
}
const markers = () => readdirSync(M);

const rng = seeded(2027);
const PAYLOADS = [
  `$(touch ${M}/a)`,
  `\`touch ${M}/b\``,
  `x; touch ${M}/c`,
  `x | touch ${M}/d`,
  `x && touch ${M}/e`,
  `x\ntouch ${M}/f`,
  `'; touch ${M}/g; '`,
  `"; touch ${M}/h; "`,
  `-oProxyCommand=touch ${M}/i`,
  `x' "$(touch ${M}/j)" '`,
  `\\'; touch ${M}/k #`,
  `*`,
  `/etc/*`,
  `[a-z]*`,
  `~root`,
  `{a,b}`,
  `$HOME`,
  `a=b`,
];
/** Random NUL-free text with a payload inside. */
function random(i: number): string {
  let s = '';
  for (let k = 0; k < 6; k++) s += String.fromCharCode(1 + rng.int(255));
  return `${s}${PAYLOADS[i % PAYLOADS.length]}${String.fromCharCode(1 + rng.int(255))}`;
}
const HOSTILE = [...PAYLOADS, ...Array.from({ length: 30 }, (_, i) => random(i))];

interface Vars {
  host: string;
  name: string;
  endpoint: string;
  version: string;
  bin: string;
  run: string;
  snapshot: string;
  peer: string;
  cluster: string;
  token: string;
  p: string;
}
const varsOf = (v: string): Vars => ({ host: v, name: v, endpoint: v, version: v, bin: v, run: v, snapshot: v, peer: v, cluster: v, token: v, p: v });

/** The command driver's templates in every shape: ssh with words, a script word, sh -c over ssh, sh -c here, a chain. */
const SHAPES: Array<[string, string, (v: Vars) => string[][]]> = [
  ['stop', 'ssh -l admin -o ConnectTimeout=3 {host} rec stop {name}', (v) => [['rec', 'stop', v.name]]],
  ['start', 'ssh {host} sudo rec start {name} {version} --bin {bin}/etcd', (v) => [['rec', 'start', v.name, v.version, '--bin', `${v.bin}/etcd`]]],
  ['running', 'ssh {host} "rec running {name} | wc -c >/dev/null"', (v) => [['rec', 'running', v.name]]],
  [
    'v2Size',
    'ssh {host} sudo sh -c "rec du {name} && rec du2 --data-dir=/srv/{name}"',
    (v) => [
      ['rec', 'du', v.name],
      ['rec', 'du2', `--data-dir=/srv/${v.name}`],
    ],
  ],
  [
    'backup',
    'ssh {host} rec cp -a /var/lib/etcd/{name} /var/lib/etcd/{name}.bak-{run}',
    (v) => [['rec', 'cp', '-a', `/var/lib/etcd/${v.name}`, `/var/lib/etcd/${v.name}.bak-${v.run}`]],
  ],
  ['config', 'ssh {host} rec cat /etc/etcd/{name}-{version}.yml', (v) => [['rec', 'cat', `/etc/etcd/${v.name}-${v.version}.yml`]]],
  [
    'restore',
    "ssh {host} rec restore {snapshot} --name {name} --initial-cluster {cluster} --initial-cluster-token {token} --initial-advertise-peer-urls {peer} --data-dir '/var/lib/etcd data/{name}' && rec chown {run}",
    (v) => [
      [
        'rec',
        'restore',
        v.snapshot,
        '--name',
        v.name,
        '--initial-cluster',
        v.cluster,
        '--initial-cluster-token',
        v.token,
        '--initial-advertise-peer-urls',
        v.peer,
        '--data-dir',
        `/var/lib/etcd data/${v.name}`,
      ],
      ['rec', 'chown', v.run],
    ],
  ],
  ['restoreCheck', 'ssh {host} test -d / && rec check {snapshot}', (v) => [['rec', 'check', v.snapshot]]],
  [
    'restoreBackup',
    'ssh {host} rec mv /d /d.failed-{run} && rec cp /d.bak-{run} /d',
    (v) => [
      ['rec', 'mv', '/d', `/d.failed-${v.run}`],
      ['rec', 'cp', `/d.bak-${v.run}`, '/d'],
    ],
  ],
  ['dataDir+onHost', 'ssh {host} sudo rec ls -d {p}/member {p}/member/wal', (v) => [['rec', 'ls', '-d', `${v.p}/member`, `${v.p}/member/wal`]]],
  ['local', 'rec local {name} {snapshot}', (v) => [['rec', 'local', v.name, v.snapshot]]],
  [
    'local sh -c',
    'sh -c "rec shell {snapshot} && rec sh2 x{name}y"',
    (v) => [
      ['rec', 'shell', v.snapshot],
      ['rec', 'sh2', `x${v.name}y`],
    ],
  ],
  ['ssh jump', 'ssh jump ssh {host} rec jumped {name}', (v) => [['rec', 'jumped', v.name]]],
];

/** The systemd preset's templates (a data dir with a blank and a placeholder), run the same way. */
const preset = expandSystemd({
  type: 'systemd',
  dataDir: '/var/lib/etcd data/{name}',
  configFile: '/etc/etcd/{name}.yml',
  bins: { '3.3': '/opt/{name}/etcd' },
  binLink: '/usr/local/bin/etcd',
});
const D = (v: Vars) => `/var/lib/etcd data/${v.name}`;
const PRESET: Array<[string, string, (v: Vars) => string[][]]> = [
  ['stop', preset.stop, () => [['systemctl', 'stop', 'etcd']]],
  [
    'start 3.3',
    preset.startByVersion!['3.3']!,
    (v) => [
      ['ln', '-sfn', `/opt/${v.name}/etcd`, '/usr/local/bin/etcd'],
      ['systemctl', 'start', 'etcd'],
    ],
  ],
  ['running', preset.running, () => [['systemctl', 'is-active', '--quiet', 'etcd']]],
  ['config', preset.config!, (v) => [['cat', `/etc/etcd/${v.name}.yml`]]],
  ['backup', preset.backup!, (v) => [['cp', '-a', '--sparse=always', D(v), `${D(v)}.bak-${v.run}`]]],
  ['dropBackup', preset.dropBackup!, (v) => [['rm', '-rf', `${D(v)}.bak-${v.run}`]]],
  // (no v2Size: the preset measures the v2 store through its trial template, where `du` of member/snap counted the v3 db)
  [
    'restoreBackup',
    preset.restoreBackup!,
    (v) => [
      ['mv', D(v), `${D(v)}.failed-${v.run}`],
      ['cp', '-a', `${D(v)}.bak-${v.run}`, D(v)],
    ],
  ],
  ['restoreCheck', preset.restoreCheck!, () => []],
  [
    'restore',
    preset.restore!,
    (v) => [
      ['mv', D(v), `${D(v)}.before-restore-${v.run}`],
      [
        'etcdctl',
        'snapshot',
        'restore',
        v.snapshot,
        '--name',
        v.name,
        '--initial-cluster',
        v.cluster,
        '--initial-cluster-token',
        v.token,
        '--initial-advertise-peer-urls',
        v.peer,
        '--data-dir',
        D(v),
      ],
      ['chown', '-R', `--reference=${D(v)}.before-restore-${v.run}`, D(v)],
    ],
  ],
];

async function runEach(shapes: typeof SHAPES): Promise<string[]> {
  const failures: string[] = [];
  for (const [label, template, expected] of shapes) {
    for (const value of HOSTILE) {
      for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
      const v = varsOf(value);
      const argv = renderTemplate(template, { ...v });
      const r = await execa(argv[0]!, argv.slice(1), { env, extendEnv: false, reject: false, stdin: 'ignore' });
      const got = ran();
      const want = expected(v);
      const why =
        markers().length > 0
          ? `ran an injected command (markers ${markers().join(',')})`
          : JSON.stringify(got.progs) !== JSON.stringify(want)
            ? `ran ${JSON.stringify(got.progs)}, meant ${JSON.stringify(want)} (exit ${r.exitCode}: ${String(r.stderr).slice(0, 200)})`
            : got.ssh.length && JSON.stringify(got.ssh[0]!.slice(1)) !== JSON.stringify(argv.slice(1))
              ? `ssh got ${JSON.stringify(got.ssh[0])}`
              : undefined;
      if (why) failures.push(`${label} with ${JSON.stringify(value)}: ${why}`);
      for (const f of markers()) rmSync(join(M, f));
    }
  }
  return failures;
}

describe('no value ever reaches a shell: every template, hostile values, a fake ssh that runs its remote command with sh -c', () => {
  it(`the quoting alone (values not even checked): the command driver's template shapes × ${HOSTILE.length} hostile values`, async () => {
    expect(await runEach(SHAPES)).toEqual([]);
  }, 600_000);

  it(`the quoting alone: the systemd preset's templates (a data dir with a blank and {name}) × ${HOSTILE.length} hostile values`, async () => {
    expect(await runEach(PRESET)).toEqual([]);
  }, 600_000);

  const member = (o: Partial<MemberSpec>): MemberSpec => ({ name: 'etcd1', endpoint: 'http://10.0.0.1:2379', host: '10.0.0.1', ...o });
  const presetDriver = () => new CommandDriver({ ...preset }, execa, env, 30_000);

  it('through the driver: a hostile member name or host is refused before anything runs, naming the member and the rule', async () => {
    const d = presetDriver();
    for (const value of HOSTILE) {
      expect(() => d.checkMembers([member({}), member({ name: value })], '--endpoints x'), value).toThrow(
        /--endpoints x: member ".*": \{name\} ".*": a member name used in a command is 1–253 letters, digits/,
      );
      expect(() => d.checkMembers([member({ host: value })], '--cluster c.yaml'), value).toThrow(
        /\{host\} ".*": a host is a DNS name .*never starting with "-"/,
      );
      await expect(d.stop(member({ host: value }))).rejects.toThrow(/\{host\}/);
      await expect(d.isRunning(member({ name: value }))).resolves.toBe(true); // the running template does not use {name}
    }
    // Nothing ran but the intended stand-ins (the running checks), and no payload.
    expect(ran().progs.every((a) => a.join(' ') === 'systemctl is-active --quiet etcd')).toBe(true);
    expect(markers()).toEqual([]);
    // Real names and hosts pass.
    for (const [name, host] of [
      ['infra-1.example.com', 'admin@infra-1.example.com'],
      ['etcd_2', '10.0.0.2'],
      ['Node3', 'fd00::3'],
    ])
      expect(() => d.checkMembers([member({ name, host })], 'x')).not.toThrow();
  }, 300_000);

  it('through the driver: a hostile snapshot path reaches the restore check and the restore as one argument, byte for byte; one with a control character is refused', async () => {
    const d = presetDriver();
    const m = member({});
    for (const value of HOSTILE) {
      const snapshot = `/backups/${value}`;
      for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
      const req: RestoreRequest = {
        snapshot,
        name: m.name,
        peerUrl: 'http://10.0.0.1:2380',
        initialCluster: 'etcd1=http://10.0.0.1:2380',
        token: 'opsctl-restore-1',
        run: '20261124T0700',
        target: { version: '3.3' },
      };
      if (/[\x00-\x1f\x7f]/.test(snapshot)) {
        await expect(d.checkRestore(m, req)).rejects.toThrow(/\{snapshot\} ".*": a path has no control characters/);
        expect(ran().ssh).toEqual([]);
        continue;
      }
      // The check: `test -d DIR && test -f SNAPSHOT` on the host: the data dir is missing here, so it fails, having run nothing else.
      await expect(d.checkRestore(m, req)).rejects.toThrow(/failed \(exit 1\)/);
      await d.restoreData(m, req);
      const etcdctl = ran().progs.find((a) => a[0] === 'etcdctl');
      expect(etcdctl?.slice(0, 5), value).toEqual(['etcdctl', 'snapshot', 'restore', snapshot, '--name']);
      expect(markers(), value).toEqual([]);
    }
  }, 300_000);
});

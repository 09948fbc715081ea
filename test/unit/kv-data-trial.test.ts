import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import type { StartSettings } from '../../src/kv/drivers/start-settings.js';
import { runDataTrial, runDataTrials } from '../../src/kv/trial/data.js';
import { hashOf, memberDirs, memberTls, parseData } from '../../src/kv/trial/data-read.js';
import { dataScript, NOT_HASHED, type DataScriptInput } from '../../src/kv/trial/data-script.js';
import { parseConfigDoc, timingIsDefault, trialIsContained, trialPlan } from '../../src/kv/trial/rewrite.js';
import { fingerprint, runTrials } from '../../src/kv/trial/run.js';

/** The answers of a driver whose members are the sandbox's simulated ones (kv/sandbox/members.ts gives them). */
const SIMULATED = { etcdData: false, askVersion: false, releases: { '3.5': '3.5.21' }, what: 'simulated' } as const;

const PORTS = { client: 2379, peer: 2380, metrics: 2381, clientHttp: 2382 };
const settings = (over: Partial<StartSettings> = {}): StartSettings => ({
  program: ['/opt/etcd-3.6/etcd'],
  args: [],
  env: {},
  from: { args: 'the command line of pid 7', env: 'the environment of pid 7' },
  ...over,
});

describe('the data trial plan: the target on the copy, alone, at once', () => {
  it('flags: data dir the copy, --force-new-cluster added, the member own timing rewritten where it is set; the plan stays contained', () => {
    const s = settings({ args: ['--name', 'kv1', '--data-dir=/var/lib/etcd', '--heartbeat-interval', '250', '--listen-client-urls=https://10.0.0.5:2379'] });
    const p = trialPlan(s, '/var/tmp/t1', PORTS, undefined, { dataCopy: true });
    expect(p.args).toEqual([
      '--name',
      'kv1',
      '--data-dir=/var/tmp/t1/data',
      '--heartbeat-interval',
      '10',
      '--listen-client-urls=https://127.0.0.1:2379',
      '--advertise-client-urls=https://127.0.0.1:2379',
      '--listen-peer-urls=http://127.0.0.1:2380',
      '--initial-advertise-peer-urls=http://127.0.0.1:2380',
      '--initial-cluster=kv1=http://127.0.0.1:2380',
      '--initial-cluster-state=new',
      '--force-new-cluster=true',
      '--election-timeout=100',
    ]);
    expect(p.notes).toContain("the data dir is a copy of the member's data");
    expect(trialIsContained(p)).toBeUndefined();
    // the settings trial is unchanged: no copy, no force-new-cluster
    expect(trialPlan(s, '/var/tmp/t1', PORTS).args.join(' ')).not.toMatch(/force-new-cluster|election-timeout/);
  });

  it('a config file: the bool and the numbers typed as etcd reads them (a quoted "true" it refuses), the wal dir the copy', async () => {
    const text = 'name: kv1\ndata-dir: /var/lib/etcd\nwal-dir: /fast/wal\nelection-timeout: 5000\nforce-new-cluster: false\n';
    const doc = await parseConfigDoc(text, '/etc/etcd.yml');
    const p = trialPlan(settings({ args: ['--config-file', '/etc/etcd.yml'], config: { file: '/etc/etcd.yml', text } }), '/var/tmp/t2', PORTS, doc, {
      dataCopy: true,
    });
    const y = parseYaml(p.config!.text) as Record<string, unknown>;
    expect(y).toMatchObject({
      'data-dir': '/var/tmp/t2/data',
      'wal-dir': '/var/tmp/t2/wal',
      'force-new-cluster': true,
      'election-timeout': 100,
      'heartbeat-interval': 10,
    });
    expect(p.args).toEqual(['--config-file', '/var/tmp/t2/etcd.conf.yml']);
    expect(trialIsContained(p, doc)).toBeUndefined();
  });
});

describe("where the member's data is, as etcd reads its settings", () => {
  it('a config file alone where it names one; else a flag, else a variable; the default NAME.etcd from its working directory', async () => {
    const doc = await parseConfigDoc('name: a\ndata-dir: /data/a\n', 'f');
    expect(memberDirs(settings({ args: ['--data-dir', '/ignored'] }), doc, '/')).toEqual({ dataDir: '/data/a' });
    expect(memberDirs(settings({ args: ['--data-dir', 'rel'], env: { ETCD_DATA_DIR: '/env' } }), undefined, '/srv')).toEqual({ dataDir: '/srv/rel' });
    expect(memberDirs(settings({ env: { ETCD_DATA_DIR: '/env', ETCD_WAL_DIR: '/wal' } }), undefined, undefined)).toEqual({ dataDir: '/env', walDir: '/wal' });
    expect(memberDirs(settings({ args: ['--name=kv2'] }), undefined, '/home/etcd')).toEqual({ dataDir: '/home/etcd/kv2.etcd' });
    expect(memberDirs(settings(), undefined, undefined)).toEqual({ why: 'its data dir "default.etcd" is relative and its working directory is not known' });
  });

  it("its TLS files: the config file's client-transport-security, or flags", async () => {
    const doc = await parseConfigDoc(
      'client-transport-security:\n  cert-file: s.crt\n  key-file: /k/s.key\n  client-cert-auth: true\n  trusted-ca-file: /k/ca.crt\n',
      'f',
    );
    expect(memberTls(settings(), doc, '/etc/etcd')).toEqual({ certAuth: true, cert: '/etc/etcd/s.crt', key: '/k/s.key', ca: '/k/ca.crt' });
    expect(memberTls(settings({ args: ['--cert-file=/c', '--key-file=/k'] }), undefined, undefined)).toEqual({ certAuth: false, cert: '/c', key: '/k' });
  });
});

const input = (over: Partial<DataScriptInput> = {}): DataScriptInput => ({
  dir: '/var/tmp/opsctl-data-trial-x',
  steps: [{ plan: trialPlan(settings({ args: ['--name', 'kv1'] }), '/var/tmp/opsctl-data-trial-x', PORTS, undefined, { dataCopy: true }) }],
  source: { dataDir: "/var/lib/it's $(touch /tmp/pwned)" },
  endpoint: 'https://10.0.0.5:2379',
  etcdctl: ['/opt/etcd-3.6/etcdctl'],
  liveTls: ['--cacert', '/etc/ssl/ca.crt'],
  copyTls: ['--insecure-skip-tls-verify'],
  timeoutS: 30,
  copyTimeoutS: 300,
  delimiter: 'end_of_data_trial_0123',
  ...over,
});

describe('the data trial script', () => {
  it('every value a single-quoted word; the password only in the variable, never on a command line', () => {
    const text = dataScript(input({ credentials: { user: 'root', password: "pa ss'$w" } }));
    expect(text).toContain(`src='/var/lib/it'\\''s $(touch /tmp/pwned)'`);
    expect(text).toContain("endpoint='https://10.0.0.5:2379'");
    const withPassword = text.split('\n').filter((l) => l.includes('pa ss'));
    expect(withPassword).toEqual([`ETCDCTL_USER='root:pa ss'\\''$w'; export ETCDCTL_USER`]);
    // the caller's own ETCDCTL_* never reach etcdctl, and the target runs with a clean environment
    expect(text).toContain('for v in $(env | sed -n "s/^\\(ETCDCTL_[A-Z0-9_]*\\)=.*/\\1/p"); do unset "$v"; done');
    expect(text).toContain("env -i 'PATH=");
  });

  it('the WAL copy goes where the plan points: the copy data dir, or its own dir when the member sets --wal-dir', () => {
    expect(dataScript(input())).toContain("copywal='/var/tmp/opsctl-data-trial-x/data/member/wal'");
    const s = settings({ args: ['--name', 'kv1', '--wal-dir', '/fast/wal'] });
    const plan = trialPlan(s, '/var/tmp/opsctl-data-trial-y', PORTS, undefined, { dataCopy: true });
    const text = dataScript(input({ dir: plan.dir, steps: [{ plan }], source: { dataDir: '/d', walDir: '/fast/wal' } }));
    expect(text).toContain("copywal='/var/tmp/opsctl-data-trial-y/wal'");
    expect(text).toContain("srcwal='/fast/wal'");
  });

  it('refuses a config file holding its here-document delimiter', async () => {
    const text = 'name: a\n# end_of_data_trial_0123\n';
    const doc = await parseConfigDoc(text, 'f');
    const plan = trialPlan(settings({ args: ['--config-file', 'f'], config: { file: 'f', text } }), '/var/tmp/z', PORTS, doc, { dataCopy: true });
    expect(() => dataScript(input({ dir: '/var/tmp/z', steps: [{ plan }] }))).toThrow(/delimiter/);
    expect(() => dataScript(input({ dir: '/elsewhere', steps: [{ plan }] }))).toThrow(/scratch dir/);
  });
});

const PANIC =
  '{"level":"panic","ts":"2026-11-25T18:52:18.907651Z","caller":"etcdserver/apply_v2.go:31","msg":"detected disallowed v2 WAL for stage --v2-deprecation=write-only","method":"PUT","stacktrace":"go.etcd.io/etcd/server/v3/etcdserver.v2ToV3Request"}';
const HASH = (h: number, c = -1) =>
  `[{"Endpoint":"http://127.0.0.1:2379","HashKV":{"header":{"cluster_id":1345073067936407013,"member_id":11502401765754866760,"revision":21,"raft_term":2},"hash":${h},"compact_revision":${c},"hash_revision":21}}]`;
const COMPACTED =
  'Failed to get the hash of endpoint http://10.0.0.5:2379 (etcdserver: mvcc: required revision has been compacted) Error: etcdserver: mvcc: required revision has been compacted';
const head = ['iso unshare -n', 'etcdctl /opt/etcd-3.6/etcdctl', 'liverev 20', 'sha256 verified', 'copied 1 41 12 20480 1 0'];
const out = (...lines: string[]) => [...head, ...lines].map((l) => `opsctl-data: ${l}`).join('\n') + '\n';

describe('what the script printed, read', () => {
  it('an exit: its code, its time and its log; the phases and the copy', () => {
    const o = parseData(`${out('step 0 exited 2 65', 'step 0 log')}${PANIC}\n\nopsctl-data: step 0 endlog\nopsctl-data: done\n`);
    expect(o).toMatchObject({ kind: 'ran', isolation: 'unshare -n', liveRevision: '20', phases: { snapshot: 41, copy: 12 } });
    expect(o.kind === 'ran' && o.steps).toEqual([{ kind: 'exited', code: 2, ms: 65, log: `${PANIC}\n` }]);
    expect(o.copied).toEqual({ attempts: 1, dbBytes: 20480, walFiles: 1, snapFiles: 0, sha256: 'verified' });
  });

  it('a refusal before anything was written: its reason word and its words', () => {
    expect(parseData("opsctl-data: not iso unshare (util-linux) is not on the host's PATH: install util-linux\n")).toMatchObject({
      kind: 'refused',
      reason: 'iso',
      detail: "unshare (util-linux) is not on the host's PATH: install util-linux",
    });
    expect(parseData('sh: 1: syntax error\n')).toMatchObject({ kind: 'error', message: "the data trial's script printed no result: sh: 1: syntax error" });
  });

  it("HashKV: the hash (not hash_revision's number), the compaction, or etcdctl's own error", () => {
    // (the header's revision: the member's head, which a hash taken at the heads is compared by)
    expect(hashOf(HASH(3171532503), '')).toEqual({ hash: '3171532503', compact: '-1', revision: '21' });
    expect(hashOf('null', COMPACTED)).toEqual({ error: 'etcdserver: mvcc: required revision has been compacted' });
  });
});

/** A driver whose host answers with the script's output given (the script itself runs in the e2e test, on real etcd). */
function hostSaying(...outputs: string[]): MemberDriver & { scripts: string[] } {
  const scripts: string[] = [];
  return {
    type: 'command',
    scripts,
    stop: async () => {},
    start: async () => {},
    isRunning: async () => true,
    current: () => undefined,
    startSettings: async () => settings({ args: ['--name', 'kv1', '--data-dir', '/var/lib/etcd'], user: { uid: 998, gid: 998 } }),
    hostShell: async (_m, script) => {
      scripts.push(script);
      return { stdout: outputs[scripts.length - 1] ?? '', stderr: '' };
    },
  };
}

const job = {
  hop: '3.5 → 3.6',
  member: { name: 'kv1', endpoint: 'http://10.0.0.5:2379' },
  target: { version: '3.6', binDir: '/opt/etcd-3.6' },
  release: '3.6.16',
};

describe('the judgement', () => {
  it("a target that exits on the copy: a problem, in etcd's own words, with what the copy held", async () => {
    const f = await runDataTrial(job, { driver: hostSaying(`${out('step 0 exited 2 65', 'step 0 log')}${PANIC}\nopsctl-data: step 0 endlog\n`), timeoutS: 30 });
    expect(f.result).toBe('problem');
    expect(f.detail).toBe(
      'etcd 3.6.16 exited (2) 65 ms after it started on a copy of kv1\'s data (db 20 KiB, 1 WAL file, 0 .snap files; in a network namespace of its own: unshare -n): "detected disallowed v2 WAL for stage --v2-deprecation=write-only (method: PUT)"',
    );
  });

  it('equal hashes: ok, with the hash, the revision and the times; the credentials are in no finding', async () => {
    const d = hostSaying(
      out(
        'step 0 ready 340 21',
        `step 0 copyhash ${HASH(42)}`,
        'step 0 copyhasherr ',
        'step 0 hashms 70',
        `livehash ${HASH(42)}`,
        'livehasherr ',
        'livehashms 60',
      ),
    );
    const f = await runDataTrial(job, { driver: d, timeoutS: 30, credentials: { user: 'root', password: 's3cret' } });
    expect(f).toMatchObject({ result: 'ok', data: { revision: '21', hash: '42', liveHash: '42', phases: { snapshot: 41, copy: 12, start: 340, hash: 130 } } });
    expect(f.detail).toContain('KV hash 42 at revision 21, as kv1 (snapshot 41 ms, copy 12 ms, start 340 ms, hash 130 ms)');
    expect(JSON.stringify(f)).not.toContain('s3cret');
    expect(d.scripts[0]).toContain("ETCDCTL_USER='root:s3cret'");
  });

  it('different hashes at one compaction: a problem; a compaction between the hashes: a second copy, then not checked', async () => {
    const differ = await runDataTrial(job, {
      driver: hostSaying(out('step 0 ready 340 21', `step 0 copyhash ${HASH(1)}`, `livehash ${HASH(2)}`)),
      timeoutS: 30,
    });
    expect(differ).toMatchObject({ result: 'problem' });
    expect(differ.detail).toContain("not with the member's data: its KV hash at revision 21 is 1, kv1's is 2");
    const d = hostSaying(
      out('step 0 ready 340 21', `step 0 copyhash ${HASH(1)}`, 'livehash null', `livehasherr ${COMPACTED}`),
      out('step 0 ready 300 21', `step 0 copyhash ${HASH(1)}`, `livehash ${HASH(9, 30)}`),
    );
    const twice = await runDataTrial(job, { driver: d, timeoutS: 30 });
    expect(d.scripts).toHaveLength(2);
    expect(twice.result).toBe('not-checked');
    expect(twice.detail).toMatch(/kv1 compacted meanwhile \(to 30; the copy: -1\).*\(twice\)$/);
  });

  it('a ladder: one copy, each hop on the data the one before wrote; after a hop that fails, the later ones are not tried', async () => {
    const hops = [
      { ...job, hop: '3.4 → 3.5', target: { version: '3.5', binDir: '/opt/etcd-3.5' }, release: '3.5.35' },
      { ...job, hop: '3.5 → 3.6', target: { version: '3.6', binDir: '/opt/etcd-3.6' }, release: '3.6.16' },
      { ...job, hop: '3.6 → 3.7', target: { version: '3.7', binDir: '/opt/etcd-3.7' }, release: '3.7.3' },
    ];
    const d = hostSaying(
      `${out('step 0 ready 500 21', `step 0 copyhash ${HASH(7)}`, 'step 0 hashms 50', 'step 0 stopped 120', 'step 1 exited 2 65', 'step 1 log')}${PANIC}\nopsctl-data: step 1 endlog\nopsctl-data: livehash ${HASH(7)}\n`,
    );
    const [a, b, c] = await runDataTrials(hops, { driver: d, timeoutS: 30 });
    expect(d.scripts).toHaveLength(1);
    // the targets' binaries in order, each one's etcdctl tried newest first
    expect(d.scripts[0]).toContain("for c in '/opt/etcd-3.7/etcdctl' '/opt/etcd-3.6/etcdctl' '/opt/etcd-3.5/etcdctl'; do");
    expect(d.scripts[0]!.match(/\$as sh -c/g)).toHaveLength(3);
    expect(a).toMatchObject({ hop: '3.4 → 3.5', result: 'ok', data: { hash: '7', liveHash: '7', phases: { start: 500, stop: 120 } } });
    expect(b).toMatchObject({ hop: '3.5 → 3.6', result: 'problem' });
    expect(b!.detail).toContain(
      "after it started on a copy of kv1's data (db 20 KiB, 1 WAL file, 0 .snap files; in a network namespace of its own: unshare -n), after etcd 3.5.35 of 3.4 → 3.5 ran on it",
    );
    expect(c).toMatchObject({
      hop: '3.6 → 3.7',
      result: 'not-checked',
      detail: 'data trial not run: not tried: etcd 3.6.16 of 3.5 → 3.6 did not get through on the copy',
    });
  });

  it('a 3.2 member (no HashKV): ok on a read at a revision at least its own before the copy, said so', async () => {
    const d = hostSaying(
      out(
        'step 0 ready 900 21',
        `step 0 copyhash ${HASH(5)}`,
        'livehash ',
        'livehasherr Error: rpc error: code = Unimplemented desc = unknown method HashKV for service etcdserverpb.Maintenance',
      ),
    );
    const f = await runDataTrial({ ...job, hop: '3.2 → 3.3', release: '3.3.27' }, { driver: d, timeoutS: 30 });
    expect(f.result).toBe('ok');
    expect(f.detail).toContain('it served a read at revision 21 (kv1 was at 20 before the copy); hashes not compared: kv1 has no HashKV (etcd 3.2)');
  });

  it('a 3.2 member: its status said 3.2, so no step hashed the copy (nothing to compare with); ok as above; a member that answers HashKV after all: not checked', async () => {
    const unhashed = ['step 0 ready 900 21', 'step 0 copyhash ', `step 0 copyhasherr ${NOT_HASHED}`];
    const none = 'livehasherr Error: rpc error: code = Unimplemented desc = unknown method HashKV for service etcdserverpb.Maintenance';
    const d = hostSaying(out(...unhashed, 'livehash ', none));
    const f = await runDataTrial({ ...job, hop: '3.2 → 3.3', release: '3.3.27' }, { driver: d, timeoutS: 30 });
    expect(f.result).toBe('ok');
    expect(f.detail).toContain('hashes not compared: kv1 has no HashKV (etcd 3.2)');
    const odd = await runDataTrial(
      { ...job, hop: '3.2 → 3.3', release: '3.3.27' },
      { driver: hostSaying(out(...unhashed, `livehash ${HASH(5)}`)), timeoutS: 30 },
    );
    expect(odd.result).toBe('not-checked');
    expect(odd.detail).toContain('the copy was not hashed (kv1 said it runs etcd 3.2, which has no HashKV), but it answers HashKV');
    // the script asks the live member's release once (its status), and hashes the copy only where it is not 3.2
    const script = d.scripts[0]!;
    expect(script).toMatch(/lver=\$\(lctl --command-timeout 10s endpoint status -w json/);
    expect(script).toContain('case $lver in 3.0.*|3.1.*|3.2.*) hashcopy=0 ;; *) hashcopy=1 ;; esac');
    expect(script).toContain(`[ "$hashcopy" = 1 ] || { say "step $1 copyhash "; say "step $1 copyhasherr ${NOT_HASHED}"; return; }`);
  });

  it('not checked, each with the one thing that makes it run', async () => {
    const iso = await runDataTrial(job, {
      driver: hostSaying("opsctl-data: not iso unshare (util-linux) is not on the host's PATH: install util-linux\n"),
      timeoutS: 30,
    });
    expect(iso).toMatchObject({ result: 'not-checked' });
    expect(iso.detail).toBe("data trial not run: unshare (util-linux) is not on the host's PATH: install util-linux");
    const none = await runDataTrial(job, { timeoutS: 30 });
    expect(none.detail).toMatch(/^data trial not run: no driver/);
    const noShell = await runDataTrial(job, { driver: { ...hostSaying(), hostShell: undefined }, timeoutS: 30 });
    expect(noShell.detail).toContain('--trial-cmd');
  });

  it('a simulated member: not checked and marked, nothing run on its host', async () => {
    const d = hostSaying();
    // the driver's answer, on the settings of a member it found running (or started): its program keeps no etcd data
    d.startSettings = async () =>
      settings({ program: ['/usr/bin/node', '/x/kv-member.cjs', '--kv-version', '3.5'], args: ['--name', 'kv1'], capabilities: SIMULATED });
    const f = await runDataTrial(job, { driver: d, timeoutS: 30 });
    expect(f).toMatchObject({ result: 'not-checked', moot: true });
    expect(f.detail).toContain('kv1 is a simulated member: it keeps no etcd data (no db, WAL or snap files) for etcd 3.6.16 to start on');
    expect(d.scripts).toEqual([]);
    // or on the driver's members as a whole (the sandbox's local driver): nothing is read
    const whole = hostSaying();
    expect((await runDataTrial(job, { driver: { ...whole, capabilities: SIMULATED }, timeoutS: 30 })).moot).toBe(true);
    expect(whole.scripts).toEqual([]);
    // the same command line without the driver's answer is not recognised by its words: etcd's trial runs
    const plain = hostSaying('opsctl-data: not busy x\n');
    plain.startSettings = async () => settings({ program: ['/usr/bin/node', '/x/kv-member.cjs', '--kv-version', '3.5'], args: ['--name', 'kv1'] });
    expect((await runDataTrial(job, { driver: plain, timeoutS: 30 })).moot).toBeUndefined();
  });

  it("etcdctl beside the target's program where the hop names no binary dir (a preset's binaries on the hosts)", async () => {
    const d = hostSaying('opsctl-data: not busy x\n');
    d.startSettings = async () => settings({ program: ['/usr/local/etcd-3.6/bin/etcd'], args: ['--data-dir', '/var/lib/etcd'] });
    await runDataTrial({ ...job, target: { version: '3.6' } }, { driver: d, timeoutS: 30 });
    expect(d.scripts[0]).toContain("for c in '/usr/local/etcd-3.6/bin/etcdctl'; do");
  });
});

describe("a settings trial the data trial's start proves: not started twice", () => {
  const hop = {
    hop: '3.4 → 3.5',
    member: { name: 'kv1', endpoint: 'http://10.0.0.5:2379' },
    target: { version: '3.5', binDir: '/opt/etcd-3.5' },
    release: '3.5.35',
  };
  /** A command driver with these settings; its host answers a settings trial's script as ready (counted). */
  const driverWith = (s: StartSettings) => {
    const d = hostSaying('opsctl-trial: version 3.5.35\nopsctl-trial: ready 250 {"health":"true"} HTTP200\n');
    d.startSettings = async () => s;
    return d;
  };
  const plain = settings({
    program: ['/opt/etcd-3.5/etcd'],
    args: ['--name', 'kv1', '--data-dir', '/var/lib/etcd', '--heartbeat-interval=100', '--election-timeout', '1000'],
  });
  const started =
    (s: StartSettings, version = '3.5.35') =>
    async () => ({ started: { ms: 321, version }, fingerprint: fingerprint(s) });

  it("its data trial got through its start with the same settings, election timing etcd's own: ok, no start of its own", async () => {
    const d = driverWith(plain);
    const [f] = await runTrials([hop], { driver: d, timeoutS: 30, dataStart: started(plain) });
    expect(f).toMatchObject({ result: 'ok', via: 'data', ms: 321, fingerprint: fingerprint(plain) });
    expect(f!.detail).toMatch(
      /^etcd 3\.5\.35 started with its settings \(4 flags .*\) in 321 ms: its data trial's start, on a copy of its data \(the same binary and settings; no second start on an empty data dir\)$/,
    );
    expect(f!.settings?.list.map((x) => x.key)).toContain('heartbeat-interval');
    expect(d.scripts).toHaveLength(0);
  });

  it("a start of its own where the data trial's does not prove it: timing of the member's own, other settings, no start, a wrong binary", async () => {
    // the data trial replaces a member's own election timing with a fast one: its start does not judge 250/2500
    const own = settings({ program: ['/opt/etcd-3.5/etcd'], args: ['--name', 'kv1', '--heartbeat-interval=250', '--election-timeout=2500'] });
    const d1 = driverWith(own);
    const [a] = await runTrials([hop], { driver: d1, timeoutS: 30, dataStart: started(own) });
    expect(a).toMatchObject({ result: 'ok' });
    expect(a!.via).toBeUndefined();
    expect(d1.scripts).toHaveLength(1);
    // (a config file's timing is etcd's own too: 1000 ms written as in the default)
    const cfg = 'name: kv1\nelection-timeout: 1000\n';
    const inFile = settings({ args: ['--config-file', '/etc/etcd.yml'], config: { file: '/etc/etcd.yml', text: cfg } });
    expect((await runTrials([hop], { driver: driverWith(inFile), timeoutS: 30, dataStart: started(inFile) }))[0]!.via).toBe('data');
    // other settings than the data trial started with (read again in between), or a data trial that did not get through its start
    const d2 = driverWith(plain);
    const [b] = await runTrials([hop], { driver: d2, timeoutS: 30, dataStart: async () => ({ started: { ms: 1 }, fingerprint: 'other' }) });
    const [c] = await runTrials([hop], { driver: d2, timeoutS: 30, dataStart: async () => ({ fingerprint: fingerprint(plain) }) });
    expect([b!.via, c!.via]).toEqual([undefined, undefined]);
    expect(d2.scripts).toHaveLength(2);
    // the binary its start ran, asked on the member's host, is not the hop's: the same finding as a trial's own
    const [w] = await runTrials([hop], { driver: driverWith(plain), timeoutS: 30, dataStart: started(plain, '3.4.23') });
    expect(w).toMatchObject({ result: 'problem' });
    expect(w!.detail).toMatch(/^\/opt\/etcd-3\.5\/etcd on the member's host is etcd 3\.4\.23, not 3\.5\.x/);
  });

  it('timingIsDefault: unset or 100/1000 ms, in the config file when there is one (etcd then reads nothing else)', async () => {
    expect(timingIsDefault(settings())).toBe(true);
    expect(timingIsDefault(settings({ env: { ETCD_ELECTION_TIMEOUT: '1000', ETCD_HEARTBEAT_INTERVAL: '100' } }))).toBe(true);
    expect(timingIsDefault(settings({ args: ['--election-timeout', '5000'] }))).toBe(false);
    expect(timingIsDefault(settings({ env: { ETCD_HEARTBEAT_INTERVAL: '50' } }))).toBe(false);
    const doc = await parseConfigDoc('heartbeat-interval: 100\n', 'f');
    expect(timingIsDefault(settings({ args: ['--heartbeat-interval=10'] }), doc)).toBe(true);
    expect(timingIsDefault(settings(), await parseConfigDoc('election-timeout: 3000\n', 'f'))).toBe(false);
  });
});

import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealCluster, type RealTestCluster } from '../framework/index.js';
import { until } from '../helpers/kv.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

const PASSWORD = 'verbs-Secure-pw-42';
const WRONG = 'not-The-pw-17';
const ETCDCTL = '/usr/bin/etcdctl';

type Ran = { exitCode?: number; stdout: unknown; stderr: unknown };
const out = (r: Ran) => String(r.stdout);
const err = (r: Ran) => String(r.stderr);
const says = (r: Ran) => `exit ${r.exitCode}\n${out(r)}\n${err(r)}`;
/** The endpoints a health output calls healthy and unhealthy (etcdctl 3.4 prints its lines on stderr). */
const verdicts = (text: string) =>
  Object.fromEntries([...text.matchAll(/^(\S+) is (healthy|unhealthy)/gm)].map((m) => [m[1]!.replace(/^https?:\/\//, ''), m[2]!]));
const revisionOf = (json: string) => /"revision":"?(\d+)/.exec(json)![1]!;
/** Runs `run` until its result satisfies `ok` (a generous deadline: the `until` helper's), and returns that result. */
async function untilResult<T>(run: () => Promise<T>, ok: (r: T) => boolean, what: string): Promise<T> {
  let last: T | undefined;
  await until(async () => ok((last = await run())), 60_000, what);
  return last!;
}

/**
 * The etcdctl-like verbs (endpoint health|status, member list, lease grant|timetolive|revoke|list,
 * alarm list, del, txn --file, watch, compact, defrag) over the connection settings `kv upgrade` takes,
 * through the built binary, side by side with etcdctl on the same cluster:
 * - a client-certificate TLS member with auth on (real etcd 3.4; opsctl's certificate has no CN, as
 *   kv-auth-tls.test.ts explains), reached by flags (--cacert/--cert/--key --user root, the password in
 *   OPSCTL_KV_PASSWORD) and by a cluster file (tls: and auth: {user, passwordFile}); the password in no
 *   output; a wrong one refused with exit 4 by every verb; no --user: etcd's refusal with exit 4 and the
 *   fix (--user) named;
 * - on a real terminal: watch follows etcdctl's puts until Ctrl-C (130); lease keep-alive renews until
 *   etcdctl revokes the lease (exit 1, "expired or revoked") or Ctrl-C (130);
 * - a plain 3-member cluster with one member stopped: endpoint health and status call the same members
 *   healthy and dead as etcdctl, exit 1.
 */
describe.runIf(
  requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', ETCDCTL) && requireProgram('script (util-linux, for the pty tests)', SCRIPT),
)('etcdctl-like verbs on a TLS cluster with auth, by flags and by cluster file (real etcd 3.4, built binary)', () => {
  const cfg = tempConfigDir('opsctl-verbs-secure-');
  let certs: TestCerts;
  let t: RealTestCluster | undefined;
  let ep: string;
  let hp: string;
  let clusterFile: string;
  const sessions: PtySession[] = [];
  /** Everything opsctl printed in this block: the password must be in none of it. */
  const printed: string[] = [];
  const base = { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1', OPSCTL_KV_PASSWORD: undefined, OPSCTL_KV_PASSWORD_FILE: undefined, OPSCTL_KV_USER: undefined };
  const tls = () => ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey];
  const ways = {
    flags: () => ({ args: ['--endpoints', ep, ...tls(), '--user', 'root'], env: { OPSCTL_KV_PASSWORD: PASSWORD } }),
    'cluster file': () => ({ args: ['--cluster', clusterFile], env: {} }),
  };
  // A generous request timeout: etcd checks each login's password with bcrypt, slow on a loaded machine
  // (and the wrong-password test sends a dozen at once).
  const opsctl = async (args: string[], env: Record<string, string | undefined> = {}) => {
    const r = await runBin(['kv', ...args, '--request-timeout', '30s'], { env: { ...base, ...env }, timeout: 120_000 });
    printed.push(out(r), err(r));
    return r;
  };
  /** etcdctl 3.4 on the member as host:port (its lines then name it as opsctl's do), TLS and root's password. */
  const ctl = (args: string[], input?: string) =>
    execa(ETCDCTL, ['--endpoints', hp, ...tls(), '--user', `root:${PASSWORD}`, '--dial-timeout', '5s', '--command-timeout', '15s', ...args], {
      reject: false,
      env: { ETCDCTL_API: '3' },
      extendEnv: false,
      timeout: 60_000,
      ...(input !== undefined ? { input } : {}),
    });
  /** etcdctl watch (it has no --max-events): its lines until `done` says they are all there, then it is ended (our own child). */
  const ctlWatch = async (args: string[], done: (text: string) => boolean) => {
    const p = execa(ETCDCTL, ['--endpoints', hp, ...tls(), '--user', `root:${PASSWORD}`, 'watch', ...args], {
      reject: false,
      env: { ETCDCTL_API: '3' },
      extendEnv: false,
      timeout: 60_000,
    });
    let text = '';
    p.stdout.on('data', (b: Buffer) => (text += b.toString()));
    try {
      await until(() => done(text), 30_000, `etcdctl watch ${args.join(' ')}`);
    } finally {
      p.kill();
      await p;
    }
    return text;
  };
  const pty = (args: string[]) => {
    const s = PtySession.opsctl(['kv', ...args, '--cluster', clusterFile, '--request-timeout', '30s'], { env: { ...base, CI: undefined, NO_COLOR: '1' } });
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    certs = makeTestCerts({ ips: ['127.0.0.1'] }, '');
    const pwFile = join(cfg.dir, 'root.password');
    writeFileSync(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
    // one Debian etcd 3.4 member with client-certificate TLS, a root user of PASSWORD and auth enabled; its cluster file
    // (cluster.yaml in the config dir) with the TLS and the password file
    t = await startCluster({
      members: 'real',
      size: 1,
      tls: certs,
      version: '/usr/bin',
      ready: 'etcdctl',
      rootPassword: PASSWORD,
      configDir: cfg.dir,
      file: { top: [`auth: { user: root, passwordFile: ${pwFile} }`] },
    });
    ep = t.endpoints[0]!;
    hp = new URL(ep).host;
    expect(ep).toMatch(/^https:/);
    clusterFile = t.file;
  }, 60_000);
  afterEach(() => {
    for (const s of sessions.splice(0)) s.kill();
  });
  afterAll(async () => {
    await t?.destroy();
    certs?.cleanup();
    cfg.cleanup();
  });

  for (const [way, conn] of Object.entries(ways)) {
    it(`${way}: every verb's facts as etcdctl (TLS flags and --user root) sees them; the password in no output`, async () => {
      const { args, env } = conn();
      const ops = (verb: string[]) => opsctl([...verb, ...args], env);
      const k = way.replace(' ', '-');

      // endpoint health: the seed's line, and etcdctl finds the member healthy too
      const health = await ops(['endpoint', 'health', '-w', 'simple']);
      expect(health.exitCode, says(health)).toBe(0);
      expect(out(health).trim()).toMatch(/^127\.0\.0\.1:\d+ is healthy: successfully committed proposal: took = [\d.]+(ns|µs|ms|s)$/);
      const theirHealth = await ctl(['endpoint', 'health']);
      expect(verdicts(out(health))).toEqual(verdicts(`${theirHealth.stdout}${theirHealth.stderr}`));
      expect(verdicts(out(health))).toEqual({ [hp]: 'healthy' });

      // endpoint status: the same id, version and leader
      const st = await ops(['endpoint', 'status', '--json']);
      expect(st.exitCode, says(st)).toBe(0);
      const [mine] = JSON.parse(out(st)) as Array<{ endpoint: string; id: string; version: string; leader: boolean }>;
      const row = (await ctl(['endpoint', 'status', '-w', 'simple'])).stdout.trim().split(', ');
      expect([mine!.endpoint, mine!.id, mine!.version, String(mine!.leader)]).toEqual([row[0], row[1], row[2], row[4]]);

      // member list: etcdctl's lines
      const ml = await ops(['member', 'list', '-w', 'simple']);
      expect(ml.exitCode, says(ml)).toBe(0);
      expect(out(ml).trim()).toBe((await ctl(['member', 'list'])).stdout.trim());
      expect(out(ml)).toContain(`https://${hp}`);

      // leases: granted by opsctl, read by etcdctl; granted by etcdctl with a key, read and revoked by opsctl
      const g = await ops(['lease', 'grant', '600', '-w', 'simple']);
      expect(out(g).trim(), says(g)).toMatch(/^lease [0-9a-f]{16} granted with TTL\(600s\)$/);
      const id = out(g).split(' ')[1]!;
      expect((await ctl(['lease', 'timetolive', id])).stdout.trim()).toMatch(
        new RegExp(`^lease ${id} granted with TTL\\(600s\\), remaining\\((59\\d|600)s\\)$`),
      );
      const id2 = /lease ([0-9a-f]+) granted/.exec((await ctl(['lease', 'grant', '600'])).stdout)![1]!.padStart(16, '0');
      expect((await ctl(['put', `${k}/leased`, 'v', `--lease=${id2}`])).exitCode).toBe(0);
      const ttl = await ops(['lease', 'timetolive', id2, '--keys', '-w', 'simple']);
      expect(out(ttl).trim(), says(ttl)).toMatch(
        new RegExp(`^lease ${id2} granted with TTL\\(600s\\), remaining\\((59\\d|600)s\\), attached keys\\(\\[${k}/leased\\]\\)$`),
      );
      const remainingless = (s: string) => s.trim().replace(/remaining\(\d+s\)/, 'remaining(…)');
      expect(remainingless(out(ttl))).toBe(remainingless((await ctl(['lease', 'timetolive', id2, '--keys'])).stdout));
      const list = await ops(['lease', 'list', '-w', 'simple']);
      expect(list.exitCode, says(list)).toBe(0);
      expect(out(list).trim().split('\n').sort()).toEqual((await ctl(['lease', 'list'])).stdout.trim().split('\n').sort());
      expect(out(list)).toContain(id);
      const rv = await ops(['lease', 'revoke', id2, '-w', 'simple']);
      expect(out(rv).trim(), says(rv)).toBe(`lease ${id2} revoked`);
      expect((await ctl(['get', `${k}/leased`])).stdout.trim()).toBe('');
      const gone = await ops(['lease', 'timetolive', id2, '-w', 'simple']);
      expect([gone.exitCode, out(gone).trim()]).toEqual([0, `lease ${id2} already expired`]);
      expect((await ctl(['lease', 'timetolive', id2])).stdout.trim()).toBe(`lease ${id2} already expired`);

      // alarms: none raised, nothing printed, exit 0 (as etcdctl)
      const al = await ops(['alarm', 'list', '-w', 'simple']);
      const theirAl = await ctl(['alarm', 'list']);
      expect([al.exitCode, out(al).trim()]).toEqual([theirAl.exitCode, theirAl.stdout.trim()]);
      expect(al.exitCode).toBe(0);

      // del: the count etcdctl's own del prints, the keys gone for etcdctl
      const puts = [1, 2, 3].flatMap((n) => [`put ${k}/p/${n} x`, `put ${k}/q/${n} x`]).join('\n');
      expect((await ctl(['txn'], `\n${puts}\n\n\n`)).stdout).toMatch(/^SUCCESS/);
      const d = await ops(['del', `${k}/p/`, '--prefix', '-w', 'simple']);
      expect(out(d).trim(), says(d)).toBe((await ctl(['del', `${k}/q/`, '--prefix'])).stdout.trim());
      expect(out(d).trim()).toBe('3');
      expect((await ctl(['get', `${k}/p/`, '--prefix', '--count-only', '-w', 'json'])).stdout).not.toMatch(/"count":[1-9]/);

      // txn --file: the same lines as etcdctl txn given the same text (on keys of their own)
      const txnText = (key: string) => `mod("${key}") = "0"\n\nput ${key} "first"\nget ${key}\n\nget ${key}\n\n`;
      const txnFile = join(cfg.dir, `${k}.txn`);
      writeFileSync(txnFile, txnText(`${k}/t1`));
      const mineTxn = await ops(['txn', '--file', txnFile, '-w', 'simple']);
      expect(mineTxn.exitCode, says(mineTxn)).toBe(0);
      const theirsTxn = await ctl(['txn'], txnText(`${k}/t2`));
      expect(out(mineTxn).trim()).toBe(theirsTxn.stdout.trim().replaceAll(`${k}/t2`, `${k}/t1`));
      expect(out(mineTxn).trim()).toBe(`SUCCESS\n\nOK\n\n${k}/t1\nfirst`);
      const again = await ops(['txn', '--file', txnFile, '-w', 'simple']);
      expect(out(again).trim()).toBe(`FAILURE\n\n${k}/t1\nfirst`);

      // watch from a revision: the history, as etcdctl watch prints it
      const rev = revisionOf((await ctl(['put', `${k}/w`, 'one', '-w', 'json'])).stdout);
      await ctl(['del', `${k}/w`]);
      const w = await ops(['watch', `${k}/w`, '--rev', rev, '--max-events', '2', '-w', 'simple']);
      expect(w.exitCode, says(w)).toBe(0);
      expect(out(w).trimEnd()).toBe(`PUT\n${k}/w\none\nDELETE\n${k}/w`);
      const theirWatch = await ctlWatch([`${k}/w`, '--rev', rev], (t) => t.includes('DELETE'));
      expect(out(w).trimEnd()).toBe(theirWatch.trimEnd());

      // compact: older revisions gone for etcdctl too; a watch from before it is refused with the revision to use
      const now = revisionOf((await ctl(['put', `${k}/h`, 'x', '-w', 'json'])).stdout);
      const cp = await ops(['compact', now, '-w', 'simple']);
      expect(out(cp).trim(), says(cp)).toBe(`compacted revision ${now}`);
      const old = await ctl(['get', `${k}/w`, `--rev=${Number(now) - 1}`]);
      expect(old.exitCode).toBe(1);
      expect(old.stderr).toMatch(/compacted/);
      const late = await ops(['watch', `${k}/w`, '--rev', rev, '--max-events', '1', '-w', 'simple']);
      expect(late.exitCode, says(late)).toBe(1);
      expect(err(late)).toMatch(/required revision has been compacted/);
      expect(err(late)).toContain(`--rev ${now}`);
      expect(err(late)).not.toMatch(/unexpected error/);

      // defrag: etcdctl's line
      const df = await ops(['defrag', '-w', 'simple']);
      expect(df.exitCode, says(df)).toBe(0);
      expect(out(df).trim()).toBe((await ctl(['defrag'])).stdout.trim());
      expect(out(df).trim()).toBe(`Finished defragmenting etcd member[${hp}]`);

      // --debug shows every request, the login among them, its password redacted
      const dbg = await ops(['member', 'list', '--debug']);
      expect(dbg.exitCode, says(dbg)).toBe(0);
      expect(err(dbg)).toMatch(/> POST https:\/\/\S+\/v3\/auth\/authenticate\n.*\n.*> body \{"name":"root","password":"\[redacted\]"\}/);

      for (const text of printed) expect(text).not.toContain(PASSWORD);
    });
  }

  it('a wrong password: every verb exits 4 naming etcd refusal of root, the password in no output (etcdctl refuses it too)', async () => {
    const file = join(cfg.dir, 'bad.txn');
    writeFileSync(file, 'mod("bad") = "0"\n\nput bad x\n\n\n');
    const verbs = [
      ['endpoint', 'health', '-w', 'simple'],
      ['endpoint', 'status', '-w', 'simple'],
      ['member', 'list'],
      ['lease', 'grant', '60'],
      ['lease', 'timetolive', '694d77aa1b2c3d4e'],
      ['lease', 'revoke', '694d77aa1b2c3d4e'],
      ['lease', 'list'],
      ['alarm', 'list'],
      ['del', 'bad'],
      ['txn', '--file', file],
      ['watch', 'bad', '--max-events', '1'],
      ['compact', '1'],
      ['defrag', '-w', 'simple'],
    ];
    const runs = await Promise.all(verbs.map((v) => opsctl([...v, '--endpoints', ep, ...tls(), '--user', 'root'], { OPSCTL_KV_PASSWORD: WRONG })));
    for (const [i, r] of runs.entries()) {
      expect(r.exitCode, `${verbs[i]!.join(' ')}: ${says(r)}`).toBe(4);
      expect(`${out(r)}${err(r)}`, verbs[i]!.join(' ')).toMatch(/etcd refused user root: wrong user name or password/);
      expect(err(r), verbs[i]!.join(' ')).toMatch(/check --user and the password/);
      expect(`${out(r)}${err(r)}`).not.toContain(WRONG);
      expect(`${out(r)}${err(r)}`).not.toMatch(/unexpected error/);
    }
    // the per-member verbs still say it per member, as etcdctl's endpoint health does
    expect(out(runs[0]!).trim()).toMatch(new RegExp(`^${hp.replace(/\./g, '\\.')} is unhealthy: failed to commit proposal: .*wrong user name or password$`));
    expect((await ctl(['get', 'bad'])).stdout.trim()).toBe('');
    // a password file in the cluster file with the wrong password: refused the same way
    const badPw = join(cfg.dir, 'wrong.password');
    writeFileSync(badPw, `${WRONG}\n`, { mode: 0o600 });
    const badFile = t!.clusterFile({ name: 'bad-cluster.yaml', top: [`auth: { user: root, passwordFile: ${badPw} }`] });
    const viaFile = await opsctl(['member', 'list', '--cluster', badFile]);
    expect(viaFile.exitCode, says(viaFile)).toBe(4);
    expect(err(viaFile)).toMatch(/etcd refused user root: wrong user name or password/);
    expect(`${out(viaFile)}${err(viaFile)}`).not.toContain(WRONG);
    const theirs = await execa(ETCDCTL, ['--endpoints', hp, ...tls(), '--user', `root:${WRONG}`, 'member', 'list'], {
      reject: false,
      env: { ETCDCTL_API: '3' },
    });
    expect(theirs.exitCode).not.toBe(0);
    expect(theirs.stderr).toMatch(/authentication failed, invalid user ID or password/);
  });

  it('no --user on the auth cluster: what etcd refuses without a user exits 4 naming --user (etcdctl is refused too)', async () => {
    const file = join(cfg.dir, 'anon.txn');
    writeFileSync(file, 'mod("anon") = "0"\n\nput anon x\n\n\n');
    const verbs = [
      ['del', 'anon'],
      ['txn', '--file', file],
      ['watch', 'anon', '--max-events', '1'],
      ['defrag', '-w', 'simple'],
    ];
    const runs = await Promise.all(verbs.map((v) => opsctl([...v, '--endpoints', ep, ...tls()])));
    for (const [i, r] of runs.entries()) {
      expect(r.exitCode, `${verbs[i]!.join(' ')}: ${says(r)}`).toBe(4);
      expect(`${out(r)}${err(r)}`, verbs[i]!.join(' ')).toMatch(/user name is empty/);
      expect(err(r), verbs[i]!.join(' ')).toContain('auth is enabled on this cluster: pass --user NAME');
      expect(err(r)).not.toMatch(/unexpected error/);
    }
    const theirs = await execa(ETCDCTL, ['--endpoints', hp, ...tls(), 'del', 'anon'], { reject: false, env: { ETCDCTL_API: '3' } });
    expect(theirs.exitCode).not.toBe(0);
    expect(theirs.stderr).toMatch(/permission denied|user name is empty/);
    for (const text of printed) expect(text).not.toContain(PASSWORD);
  });

  it('on a terminal: watch prints each change as etcdctl makes it, until Ctrl-C (130)', async () => {
    const s = pty(['watch', 'pty/w']);
    // the watch is in place once a put shows: until then a put may land before it (put again, a second on)
    let put = 0;
    await until(
      async () => {
        if (/PUT\s+pty\/w\s+ready/.test(s.text)) return true;
        if (Date.now() - put > 1000) {
          put = Date.now();
          await ctl(['put', 'pty/w', 'ready']);
        }
        return false;
      },
      60_000,
      'the watch to show a put',
    );
    for (const v of ['one', 'two']) {
      await ctl(['put', 'pty/w', v]);
      await s.waitFor(new RegExp(`PUT\\s+pty/w\\s+${v}`));
    }
    await ctl(['del', 'pty/w']);
    await s.waitFor(/DELETE\s+pty\/w/);
    expect(s.text.indexOf('one')).toBeLessThan(s.text.indexOf('two'));
    s.ctrlC();
    expect(await s.exitCode()).toBe(130);
    expect(s.text).not.toMatch(/unexpected error/);
    expect(s.output).not.toContain(PASSWORD);
  });

  it('on a terminal: lease keep-alive renews until etcdctl revokes the lease (exit 1, expired or revoked); Ctrl-C ends another (130)', async () => {
    const grant = async () => /lease ([0-9a-f]+) granted/.exec((await ctl(['lease', 'grant', '3'])).stdout)![1]!.padStart(16, '0');
    const id = await grant();
    const s = pty(['lease', 'keep-alive', id]);
    // renewals at a third of the TTL: two lines, well past the first renewal
    await until(() => s.text.split(`lease ${id} keepalived with TTL(3)`).length > 2, 60_000, 'two renewals');
    expect((await ctl(['lease', 'revoke', id])).stdout.trim()).toBe(`lease ${id} revoked`);
    expect(await s.exitCode()).toBe(1);
    expect(s.text).toContain(`lease ${id} expired or revoked`);
    expect(s.text).not.toMatch(/unexpected error/);
    expect(s.output).not.toContain(PASSWORD);

    const id2 = await grant();
    const s2 = pty(['lease', 'keep-alive', id2]);
    await s2.waitFor(`lease ${id2} keepalived with TTL(3)`);
    s2.ctrlC();
    expect(await s2.exitCode()).toBe(130);
    // the lease was kept alive: etcdctl still finds it
    expect((await ctl(['lease', 'timetolive', id2])).stdout).toMatch(new RegExp(`^lease ${id2} granted with TTL\\(3s\\)`));
  });
});

describe.runIf(requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', ETCDCTL))(
  'endpoint health and status with a member stopped (real etcd 3.4, 3 members, built binary)',
  () => {
    const cfg = tempConfigDir('opsctl-verbs-dead-');
    let t: RealTestCluster | undefined;
    afterAll(async () => {
      await t?.destroy();
      cfg.cleanup();
    });

    it('the stopped member unhealthy and the others healthy as etcdctl says, exit 1; its status a warning naming it, the others printed, exit 1', async () => {
      // three Debian etcd 3.4 members, started; the test waits for etcdctl to find them healthy
      t = await startCluster({ members: 'real', size: 3, version: '/usr/bin', ready: 'none', configDir: cfg.dir });
      const c: RealCluster = t.real;
      const eps = c.members.map((m) => new URL(m.clientUrl).host);
      const ctl = (args: string[]) =>
        execa(ETCDCTL, ['--endpoints', eps.join(','), '--dial-timeout', '2s', '--command-timeout', '2s', ...args], {
          reject: false,
          env: { ETCDCTL_API: '3' },
          extendEnv: false,
          timeout: 60_000,
        });
      const ops = (args: string[]) =>
        runBin(['kv', ...args, '--endpoints', c.members.map((m) => m.clientUrl).join(','), '--request-timeout', '2s'], {
          env: { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' },
          timeout: 120_000,
        });
      await until(async () => (await ctl(['endpoint', 'health'])).exitCode === 0, 60_000, 'three 3.4 members healthy');

      const dead = c.members[2]!;
      const deadHp = new URL(dead.clientUrl).host;
      const alive = eps.filter((e) => e !== deadHp);
      c.stop(dead);
      await until(() => !c.alive(dead), 30_000, `${dead.name} stopped`);
      const expected = Object.fromEntries(eps.map((e) => [e, e === deadHp ? 'unhealthy' : 'healthy']));

      // etcdctl first: the two others answer (a new leader, if the stopped one led) and the stopped one does not
      const theirs = await untilResult(
        () => ctl(['endpoint', 'health']),
        (r) => {
          const v = verdicts(`${r.stdout}\n${r.stderr}`);
          return eps.every((e) => v[e] === expected[e]);
        },
        'etcdctl to find the two others healthy',
      );
      expect(theirs.exitCode).toBe(1);

      const health = await untilResult(
        () => ops(['endpoint', 'health', '-w', 'simple']),
        (r) => alive.every((e) => verdicts(out(r))[e] === 'healthy'),
        'opsctl to find the two others healthy',
      );
      expect(health.exitCode, says(health)).toBe(1);
      expect(verdicts(out(health))).toEqual(verdicts(`${theirs.stdout}\n${theirs.stderr}`));
      const lines = out(health).trim().split('\n');
      expect(lines).toHaveLength(3);
      for (const e of alive)
        expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${e} is healthy: successfully committed proposal: took = [\\d.]+(ns|µs|ms|s)$`)));
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${deadHp} is unhealthy: failed to commit proposal: \\S.*$`)));

      // endpoint status: the stopped one a warning naming it, the others' rows (their ids as etcdctl's), exit 1
      const st = await untilResult(
        () => ops(['endpoint', 'status', '-w', 'simple']),
        (r) => alive.every((e) => out(r).includes(`${e}, `)),
        "opsctl to print the two others' status",
      );
      expect(st.exitCode, says(st)).toBe(1);
      expect(err(st)).toContain(`Failed to get the status of endpoint ${deadHp}`);
      const rows = out(st).trim().split('\n');
      expect(rows.map((l) => l.split(', ')[0]).sort()).toEqual([...alive].sort());
      const theirSt = await ctl(['endpoint', 'status', '-w', 'simple']);
      expect(theirSt.stderr).toContain(`Failed to get the status of endpoint ${deadHp}`);
      const ids = (text: string) =>
        text
          .trim()
          .split('\n')
          .map((l) => l.split(', ').slice(0, 2).join(', '))
          .sort();
      expect(ids(out(st))).toEqual(ids(theirSt.stdout));
      expect(out(st) + err(st)).not.toMatch(/unexpected error/);
    });
  },
);

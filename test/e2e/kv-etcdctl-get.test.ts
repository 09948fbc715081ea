import { afterAll, describe, expect, it } from 'vitest';
import { tempConfigDir } from '../helpers/cli.js';
import { makeTestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, ladderVersions, minorAtLeast } from '../helpers/etcd-releases.js';
import { bigJson, hexOf, says, sideBySide, unb64, type Ran } from '../helpers/etcdctl-side.js';
import { until } from '../helpers/kv.js';

/**
 * `kv get` and `kv put` side by side with etcdctl of the member's own version, on real 3.4, 3.6 and 3.7
 * members holding the same data: every range flag (--prefix, --keys-only, --rev, --limit, --from-key, a
 * range end, --sort-by/--order, --print-value-only, --count-only), a missing key, a compacted revision,
 * put --lease/--prev-kv/--ignore-value/--ignore-lease, and the ETCDCTL_* variables. etcdctl's own
 * outputs (-w simple, json, fields) must be byte for byte etcdctl's; opsctl's own (--json, the table
 * piped as TSV) the same facts, the documented differences aside (docs/kv-etcdctl.md): keys and values
 * as text and ids in hex in --json, a value's line breaks as spaces in TSV, a flag beating its variable
 * (etcdctl 3.4+ refuses the pair), a bad variable refused (etcdctl ignores it).
 *
 * CI runs the two ends (3.4 and 3.7); `npm run test:versions` (OPSCTL_VERSIONS=all) adds 3.6.
 */
const dirs = etcdLadderDirs();
const MINORS = process.env.OPSCTL_VERSIONS === 'all' ? ['3.4', '3.6', '3.7'] : ['3.4', '3.7'];
const VERSIONS = ladderVersions(dirs).filter(([minor]) => MINORS.includes(minor));

/** etcdctl's -w json of a get as opsctl's --json says it: keys and values as text, ids in hex, every field. */
function asOpsctlJson(text: string, keysOnly: boolean) {
  const e = bigJson(text) as {
    header: Record<string, string | number>;
    kvs?: Array<Record<string, string | number>>;
    more?: boolean;
    count?: number;
  };
  return {
    header: {
      cluster_id: hexOf(e.header.cluster_id),
      member_id: hexOf(e.header.member_id),
      revision: Number(e.header.revision),
      raft_term: Number(e.header.raft_term),
    },
    kvs: (e.kvs ?? []).map((kv) => ({
      key: unb64(kv.key),
      ...(keysOnly ? {} : { value: unb64(kv.value) }),
      create_revision: Number(kv.create_revision),
      mod_revision: Number(kv.mod_revision),
      version: Number(kv.version),
      lease: kv.lease ? hexOf(kv.lease).padStart(16, '0') : null,
    })),
    more: e.more ?? false,
    count: e.count ?? 0,
  };
}

describe.runIf(Boolean(dirs))('kv get and put side by side with etcdctl, on real etcd', () => {
  const cfg = tempConfigDir('opsctl-etcdctl-get-');
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    cfg.cleanup();
  });

  for (const [minor, bin] of VERSIONS) {
    it(`etcd ${minor}: get's range flags, put --lease and the ETCDCTL_* variables, as etcdctl ${minor}`, async () => {
      const c = await startCluster({ members: 'real', configDir: cfg.dir, size: 1, bins: { [minor]: bin } });
      clusters.push(c);
      c.real.start(c.members[0]!, minor);
      const ep = c.members[0]!.clientUrl.replace('http://', '');
      const { ctl, ops } = sideBySide(bin, [ep], cfg.dir);
      await until(async () => (await ctl(['endpoint', 'health'])).exitCode === 0, 60_000, `etcd ${minor} healthy`);
      const rev = async (args: string[]) => String((bigJson((await ctl([...args, '-w', 'json'])).stdout) as { header: { revision: unknown } }).header.revision);

      // the data: values overwritten (older revisions to read), one deleted, one on several lines, one on a lease
      await ctl(['put', 'p/a', 'va']);
      await ctl(['put', 'p/b', 'vb1']);
      const r1 = await rev(['put', 'p/c', 'vc']);
      await ctl(['put', 'p/b', 'vb2']);
      await ctl(['put', 'p/d', 'two\nlines']);
      await ctl(['put', 'p/e', 've']);
      await ctl(['put', 'q/x', 'vx']);
      await ctl(['del', 'p/c']);
      // (etcdctl prints it in 16 digits, %016x: without its leading zeros here, as hexOf gives ids)
      const lease = /lease ([0-9a-f]+) granted/.exec((await ctl(['lease', 'grant', '600'])).stdout)![1]!.replace(/^0+/, '');
      await ctl(['put', 'p/l', 'vl', `--lease=${lease}`]);

      const cases: string[][] = [
        ['p/', '--prefix'],
        ['p/', '--prefix', '--keys-only'],
        ['p/', '--prefix', '--limit', '2'],
        ['p/b', '--rev', r1],
        ['p/', '--prefix', '--rev', r1],
        ['p/b', '--from-key'],
        ['p/a', 'p/d'],
        ['p/', '--prefix', '--sort-by', 'MODIFY', '--order', 'DESCEND'],
        ['p/', '--prefix', '--sort-by', 'value'],
        ['p/', '--prefix', '--order', 'DESCEND', '--limit', '3'],
        ['p/', '--prefix', '--print-value-only'],
        ['p/', '--prefix', '--consistency', 's'],
        ['', '--prefix', '--keys-only'],
        ['p/l'],
        ['missing'],
      ];
      for (const args of cases) {
        const what = `get ${args.join(' ')}`;
        // etcdctl's own outputs, byte for byte
        for (const w of ['simple', 'json', 'fields']) {
          const mine = await ops(['get', ...args, '-w', w]);
          const theirs = await ctl(['get', ...args, '-w', w]);
          if (args.includes('--print-value-only') && w !== 'simple') {
            // the values alone are lines: refused with json and fields, by both
            expect([mine.exitCode, theirs.exitCode !== 0]).toEqual([2, true]);
            continue;
          }
          expect(theirs.exitCode, `${what} -w ${w}: etcdctl ${says(theirs)}`).toBe(0);
          expect(mine.exitCode, `${what} -w ${w}: ${says(mine)}`).toBe(0);
          expect(mine.stdout, `${what} -w ${w}`).toBe(theirs.stdout);
        }
        // opsctl's --json: etcdctl's fields, keys and values as text, ids in hex
        const json = await ops(['get', ...args, '--json']);
        expect(json.exitCode, says(json)).toBe(0);
        // (etcdctl prints no JSON with --print-value-only: its JSON of the same keys)
        const reference = (await ctl(['get', ...args.filter((a) => a !== '--print-value-only'), '-w', 'json'])).stdout;
        expect(JSON.parse(json.stdout), `${what} --json`).toEqual(asOpsctlJson(reference, args.includes('--keys-only')));
        // piped without -w: one key's value, the keys or the values alone, or a row per key (key, value,
        // revisions, version, lease) with a value's line breaks as spaces
        const piped = await ops(['get', ...args]);
        const theirKvs = asOpsctlJson(reference, false).kvs;
        const ranged = args.includes('--prefix') || args.includes('--from-key') || (args.length > 1 && !args[1]!.startsWith('-'));
        const expected = args.includes('--keys-only')
          ? theirKvs.map((kv) => kv.key)
          : args.includes('--print-value-only') || !ranged
            ? theirKvs.map((kv) => kv.value ?? '')
            : theirKvs.map((kv) =>
                [kv.key, (kv.value ?? '').replace(/[\t\n\r]+/g, ' '), kv.create_revision, kv.mod_revision, kv.version, kv.lease ?? ''].join('\t'),
              );
        expect(piped.exitCode, says(piped)).toBe(0);
        expect(piped.stdout, what).toBe(expected.join('\n'));
      }

      // --count-only: etcdctl 3.5+ prints it with -w fields only; opsctl with every -w and on 3.4 too
      const count = await ops(['get', 'p/', '--prefix', '--count-only']);
      expect([count.exitCode, count.stdout]).toEqual([0, '5']);
      if (minorAtLeast(minor, '3.5'))
        expect((await ops(['get', 'p/', '--prefix', '--count-only', '-w', 'fields'])).stdout).toBe(
          (await ctl(['get', 'p/', '--prefix', '--count-only', '-w', 'fields'])).stdout,
        );

      // a missing key: nothing printed, exit 0, as etcdctl; --require: exit 1
      const none = await ops(['get', 'missing']);
      expect([none.exitCode, none.stdout]).toEqual([0, '']);
      const required = await ops(['get', 'missing', '--require']);
      expect(required.exitCode).toBe(1);
      expect(required.stderr).toContain('no key matches "missing"');
      expect((await ops(['get', 'p/', '--prefix', '--require'])).exitCode).toBe(0);
      // checked before anything is sent, as etcdctl checks them
      for (const bad of [
        ['p/', '--prefix', '--from-key'],
        ['p/a', 'p/z', '--prefix'],
        ['p/', '--keys-only', '--count-only'],
        ['p/', '--sort-by', 'SIZE'],
        ['p/', '--limit', 'x'],
      ])
        expect((await ops(['get', ...bad])).exitCode, bad.join(' ')).toBe(2);

      // put: -w simple as etcdctl's (OK; the key before it with --prev-kv)
      await ctl(['put', 'pv/1', 'old']);
      await ctl(['put', 'pv/2', 'old']);
      const mine = await ops(['put', 'pv/1', 'new', '--prev-kv', '-w', 'simple']);
      const theirs = await ctl(['put', 'pv/2', 'new', '--prev-kv']);
      expect(mine.stdout).toBe(theirs.stdout.replace('pv/2', 'pv/1'));
      expect(mine.stdout).toBe('OK\npv/1\nold');
      expect((await ops(['put', 'pv/3', 'v', '-w', 'simple'])).stdout).toBe('OK');

      // put --lease (hex, as kv lease grant and etcdctl print it): etcdctl sees the key on that lease, and the other way round
      const ctlLease = (key: string) => async () => {
        const kv = (bigJson((await ctl(['get', key, '-w', 'json'])).stdout) as { kvs?: Array<{ lease?: string | number; value: string }> }).kvs?.[0];
        return kv && { lease: kv.lease === undefined ? '' : hexOf(kv.lease), value: unb64(kv.value) };
      };
      const opsLease = (await ops(['lease', 'grant', '600', '--jq', '.id'])).stdout;
      const put1 = await ops(['put', 'lk/1', 'v1', '--lease', opsLease]);
      expect(put1.exitCode, says(put1)).toBe(0);
      expect(await ctlLease('lk/1')()).toEqual({ lease: opsLease.replace(/^0+/, ''), value: 'v1' });
      expect((await ctl(['put', 'lk/2', 'v2', `--lease=${lease}`])).exitCode).toBe(0);
      expect(JSON.parse((await ops(['get', 'lk/2', '--json'])).stdout).kvs[0].lease).toBe(lease.padStart(16, '0'));
      // --ignore-lease keeps the lease, --ignore-value the value (each as etcdctl's on a twin key)
      expect((await ops(['put', 'lk/1', 'v1b', '--ignore-lease'])).exitCode).toBe(0);
      expect(await ctlLease('lk/1')()).toEqual({ lease: opsLease.replace(/^0+/, ''), value: 'v1b' });
      expect((await ops(['put', 'lk/1', '--ignore-value', '--lease', lease])).exitCode).toBe(0);
      expect(await ctlLease('lk/1')()).toEqual({ lease, value: 'v1b' });
      // a lease that is not there, a key that is not there for --ignore-value: refused by etcd, exit 1, as etcdctl
      const noLease = await ops(['put', 'lk/3', 'v', '--lease', '1234abcd']);
      expect(noLease.exitCode).toBe(1);
      expect(noLease.stderr).toContain('requested lease not found');
      expect((await ctl(['put', 'lk/3', 'v', '--lease=1234abcd'])).exitCode).toBe(1);
      const noKey = await ops(['put', 'lk/none', '--ignore-value']);
      expect(noKey.exitCode).toBe(1);
      expect(noKey.stderr).toContain('key not found');
      expect((await ctl(['put', 'lk/none', '--ignore-value'])).exitCode).toBe(1);
      // revoked by opsctl: every key on it is gone, for etcdctl too
      expect((await ops(['lease', 'revoke', lease])).exitCode).toBe(0);
      for (const k of ['lk/1', 'lk/2', 'p/l']) {
        expect((await ops(['get', k, '--require'])).exitCode, k).toBe(1);
        expect((await ctl(['get', k])).stdout, k).toBe('');
      }

      // ETCDCTL_ENDPOINTS alone: the same lines as etcdctl's with the same variable
      const env = { ETCDCTL_ENDPOINTS: ep };
      expect((await ops(['get', 'p/', '--prefix', '-w', 'simple'], env)).stdout).toBe((await ctl(['get', 'p/', '--prefix'], env)).stdout);
      expect((await ops(['get', 'p/a'], { ...env, ETCDCTL_COMMAND_TIMEOUT: '5s', ETCDCTL_DIAL_TIMEOUT: '2s' })).stdout).toBe('va');
      // a flag beats its variable (etcdctl 3.4+ refuses the pair: a documented difference)
      const both = { ETCDCTL_ENDPOINTS: '127.0.0.1:1' };
      expect((await ops(['get', 'p/a', '--endpoints', ep], both)).stdout).toBe('va');
      expect((await ctl(['--endpoints', ep, 'get', 'p/a'], both)).stderr).toMatch(/conflicting environment variable/);
      // a bad value is refused naming the variable, nothing sent (etcdctl ignores it: a documented difference)
      for (const [name, value] of [
        ['ETCDCTL_COMMAND_TIMEOUT', '1'],
        ['ETCDCTL_DIAL_TIMEOUT', 'soon'],
        ['ETCDCTL_ENDPOINTS', 'http://ho st:1'],
        ['ETCDCTL_INSECURE_SKIP_TLS_VERIFY', 'maybe'],
      ] as const) {
        const bad: Ran = await ops(['get', 'p/a'], { ETCDCTL_ENDPOINTS: ep, [name]: value });
        expect(bad.exitCode, `${name}=${value}: ${says(bad)}`).toBe(2);
        expect(bad.stderr).toContain(name);
      }
      expect((await ctl(['get', 'p/a'], { ...env, ETCDCTL_COMMAND_TIMEOUT: '1' })).stdout).toBe('p/a\nva');

      // a compacted revision: refused by etcd, exit 1, for both
      const now = await rev(['put', 'p/z', 'z']);
      expect((await ctl(['compact', now])).exitCode).toBe(0);
      const old = await ops(['get', 'p/b', '--rev', r1]);
      expect(old.exitCode).toBe(1);
      expect(old.stderr).toMatch(/required revision has been compacted/);
      expect((await ctl(['get', 'p/b', '--rev', r1])).exitCode).toBe(1);
    }, 240_000);
  }
});

describe.runIf(Boolean(dirs))('the ETCDCTL_* TLS and auth variables, side by side with etcdctl (client-certificate TLS, auth on)', () => {
  const cfg = tempConfigDir('opsctl-etcdctl-env-');
  const certs = dirs ? makeTestCerts({ ips: ['127.0.0.1'] }, '') : undefined;
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    certs?.cleanup();
    cfg.cleanup();
  });
  const PW = 'env-Root-pw-9';

  for (const [minor, bin] of ladderVersions(dirs).filter(([m]) => ['3.4', '3.6'].includes(m))) {
    it(`etcd ${minor}: ETCDCTL_ENDPOINTS, _CACERT, _CERT, _KEY, _USER (NAME:PASSWORD or with _PASSWORD) reach it as etcdctl's do`, async () => {
      const c = await startCluster({ members: 'real', configDir: cfg.dir, size: 1, tls: certs, bins: { [minor]: bin } });
      clusters.push(c);
      c.real.start(c.members[0]!, minor);
      const tls = { ETCDCTL_ENDPOINTS: c.members[0]!.clientUrl, ETCDCTL_CACERT: certs!.ca, ETCDCTL_CERT: certs!.clientCert, ETCDCTL_KEY: certs!.clientKey };
      const { ctl, ops } = sideBySide(bin, [], cfg.dir);
      await until(async () => (await ctl(['endpoint', 'health'], tls)).exitCode === 0, 60_000, `etcd ${minor} over TLS`);
      expect((await ctl(['user', 'add', `root:${PW}`], tls)).exitCode).toBe(0);
      expect((await ctl(['auth', 'enable'], tls)).exitCode).toBe(0);
      const env = { ...tls, ETCDCTL_USER: `root:${PW}` };

      // every variable etcdctl reads: opsctl writes, etcdctl reads it back, and the lines are the same
      const put = await ops(['put', 's/k', 'secret value', '--debug'], env);
      expect(put.exitCode, says(put)).toBe(0);
      expect(`${put.stdout}${put.stderr}`).not.toContain(PW);
      expect((await ctl(['get', 's/k'], env)).stdout).toBe('s/k\nsecret value');
      expect((await ops(['get', 's/', '--prefix', '-w', 'simple'], env)).stdout).toBe((await ctl(['get', 's/', '--prefix'], env)).stdout);
      // the user with ETCDCTL_PASSWORD beside it
      const split = { ...tls, ETCDCTL_USER: 'root', ETCDCTL_PASSWORD: PW };
      expect((await ops(['get', 's/k'], split)).stdout).toBe('secret value');
      expect((await ctl(['get', 's/k'], split)).stdout).toBe('s/k\nsecret value');
      // a wrong password: refused by name (exit 4), as etcdctl refuses it (exit 1: its code for every error)
      const wrong = await ops(['get', 's/k'], { ...tls, ETCDCTL_USER: 'root:nope' });
      expect(wrong.exitCode, says(wrong)).toBe(4);
      expect(wrong.stderr).toContain('wrong user name or password');
      expect((await ctl(['get', 's/k'], { ...tls, ETCDCTL_USER: 'root:nope' })).exitCode).not.toBe(0);
      // the password in both places: refused (as etcdctl: --password with a user that carries one)
      const twice = await ops(['get', 's/k'], { ...env, ETCDCTL_PASSWORD: PW });
      expect([twice.exitCode, twice.stderr.includes('ETCDCTL_PASSWORD')]).toEqual([2, true]);
      // no CA: the member's certificate is not trusted, for both
      const { ETCDCTL_CACERT: _ca, ...noCa } = env;
      const untrusted = await ops(['get', 's/k'], noCa);
      expect(untrusted.exitCode, says(untrusted)).toBe(1);
      expect(untrusted.stderr).toContain('unknown CA');
      // a file that is not there: refused naming the variable, nothing sent
      const missing = await ops(['get', 's/k'], { ...env, ETCDCTL_CACERT: '/nonexistent/ca.pem' });
      expect(missing.exitCode).toBe(2);
      expect(missing.stderr).toContain('ETCDCTL_CACERT');
      // a flag beats its variable; opsctl's own variable beats etcdctl's
      expect((await ops(['get', 's/k', '--cacert', certs!.ca], { ...env, ETCDCTL_CACERT: '/nonexistent/ca.pem' })).stdout).toBe('secret value');
      expect((await ops(['get', 's/k'], { ...env, ETCDCTL_USER: 'nobody:x', OPSCTL_KV_USER: 'root', OPSCTL_KV_PASSWORD: PW })).stdout).toBe('secret value');
      // --user with a password after the colon is refused (a flag's value is seen by others); the variable may carry it
      const flag = await ops(['get', 's/k', '--user', `root:${PW}`], tls);
      expect(flag.exitCode).toBe(2);
      expect(flag.stderr).not.toContain(PW);
    }, 240_000);
  }
});

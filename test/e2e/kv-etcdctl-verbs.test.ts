import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, ladderVersions, minorAtLeast } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { PtySession, ptyAvailable } from '../helpers/pty.js';

/**
 * The etcdctl verbs around a window (endpoint, member, move-leader, lease, alarm, defrag, compact, del,
 * watch, txn), on a real 3-member cluster of every version 3.2 … 3.7, side by side with the same
 * version's etcdctl: the same facts (ids, versions, leases, hashes, members), etcdctl's `-w simple`
 * lines where scripts parse them, exit 1 where etcdctl exits 1, and a refusal naming the version for a
 * call the version does not have.
 *
 * CI runs 3.2, 3.4, 3.5 and 3.7 (the v2-era floor, the last before 3.5's verbs, 3.5's, the newest); `npm run
 * test:versions` (OPSCTL_VERSIONS=all) every version, 3.3 and 3.6 too.
 */
const dirs = etcdLadderDirs();
const VERSIONS = ladderVersions(dirs).filter(([minor]) => process.env.OPSCTL_VERSIONS === 'all' || !['3.3', '3.6'].includes(minor));
const after = minorAtLeast;

describe.runIf(Boolean(dirs))('etcdctl verbs on real etcd, side by side with etcdctl', () => {
  const cfg = tempConfigDir('opsctl-etcdctl-verbs-');
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    cfg.cleanup();
  });

  for (const [minor, bin] of VERSIONS) {
    it(`etcd ${minor}: every verb it has, as etcdctl ${minor} sees it; the ones it lacks refused naming the version`, async () => {
      const c = await startCluster({ members: 'real', configDir: cfg.dir, size: 3, bins: { [minor]: bin } });
      clusters.push(c);
      for (const m of c.members) c.real.start(m, minor);
      const eps = c.members.map((m) => m.clientUrl.replace('http://', ''));
      const ctl = (args: string[]) =>
        execa(join(bin, 'etcdctl'), ['--endpoints', eps.join(','), ...args], { reject: false, env: { ETCDCTL_API: '3' }, timeout: 60_000 });
      const ops = (args: string[], input?: string) =>
        execa(process.execPath, [BIN, 'kv', ...args, '--endpoints', c.members.map((m) => m.clientUrl).join(',')], {
          reject: false,
          env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
          timeout: 120_000,
          ...(input !== undefined ? { input } : {}),
        });
      await until(async () => (await ctl(['endpoint', 'health'])).exitCode === 0, 60_000, `three ${minor} members healthy`);
      const says = (r: { exitCode?: number; stdout: string; stderr: string }) => `exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`;

      // endpoint health: the seed's line for every member; etcdctl finds the same ones healthy
      const health = await ops(['endpoint', 'health', '-w', 'simple']);
      expect(health.exitCode, says(health)).toBe(0);
      const lines = health.stdout.trim().split('\n').sort();
      expect(lines.map((l) => l.split(' ')[0])).toEqual([...eps].sort());
      for (const l of lines) expect(l).toMatch(/^127\.0\.0\.1:\d+ is healthy: successfully committed proposal: took = [\d.]+(ns|µs|ms|s)$/);
      const theirs = await ctl(['endpoint', 'health']);
      expect(`${theirs.stdout}${theirs.stderr}`.match(/is healthy/g)).toHaveLength(3);
      // etcdctl's --cluster, typed as etcdctl takes it: one endpoint given, every member of the member list checked
      const one = c.members[0]!.clientUrl;
      const whole = await execa(process.execPath, [BIN, 'kv', 'endpoint', 'health', '--cluster', '-w', 'simple', '--endpoints', one], {
        reject: false,
        env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
        timeout: 120_000,
      });
      expect(whole.exitCode, says(whole)).toBe(0);
      // (etcdctl's --cluster came in 3.3: 3.2's is given every endpoint instead)
      const theirArgs = after(minor, '3.3')
        ? ['--endpoints', one.replace('http://', ''), 'endpoint', 'health', '--cluster']
        : ['--endpoints', eps.join(','), 'endpoint', 'health'];
      const wholeTheirs = await execa(join(bin, 'etcdctl'), theirArgs, { reject: false, env: { ETCDCTL_API: '3' } });
      const healthyEps = (text: string) => [...text.matchAll(/^(\S+) is healthy/gm)].map((m) => m[1]!.replace('http://', '')).sort();
      expect(healthyEps(whole.stdout)).toEqual([...eps].sort());
      expect(healthyEps(`${wholeTheirs.stdout}${wholeTheirs.stderr}`)).toEqual(healthyEps(whole.stdout));

      // endpoint status: the same id, version and leader per endpoint
      const st = await ops(['endpoint', 'status', '--json']);
      expect(st.exitCode, says(st)).toBe(0);
      const mine = JSON.parse(st.stdout) as Array<{ endpoint: string; id: string; version: string; leader: boolean }>;
      const cols = (await ctl(['endpoint', 'status', '-w', 'simple'])).stdout
        .trim()
        .split('\n')
        .map((l) => l.split(', '));
      for (const row of cols) {
        const me = mine.find((x) => x.endpoint === row[0])!;
        expect([me.id, me.version]).toEqual([row[1], row[2]]);
        // the leader column: 5th up to 3.5; 3.6 and 3.7 add the storage version, the size in use, the share free and the quota before it
        expect(String(me.leader)).toBe(row[after(minor, '3.6') ? 8 : 4]);
      }
      expect(mine.filter((x) => x.leader)).toHaveLength(1);

      // member list: etcdctl's lines (3.4+ adds the learner column; 3.2/3.3 have five)
      const ml = await ops(['member', 'list', '-w', 'simple']);
      expect(ml.exitCode, says(ml)).toBe(0);
      const theirList = (await ctl(['member', 'list'])).stdout.trim().split('\n').sort();
      expect(ml.stdout.trim().split('\n').sort()).toEqual(after(minor, '3.4') ? theirList : theirList.map((l) => `${l}, false`));
      // gh's habits too: piped without -w, tab-separated columns (the same facts); --jq over the JSON
      const tsv = await ops(['member', 'list']);
      expect(
        tsv.stdout
          .trim()
          .split('\n')
          .map((l) => l.split('\t').slice(0, 3).join(', '))
          .sort(),
      ).toEqual(theirList.map((l) => l.split(', ').slice(0, 3).join(', ')));
      const names = await ops(['member', 'list', '--jq', '.[].name']);
      expect(names.stdout.trim().split('\n').sort()).toEqual(c.members.map((m) => m.name).sort());

      // leases: granted by opsctl, read by etcdctl; granted by etcdctl with a key, read by opsctl
      const g = await ops(['lease', 'grant', '600', '-w', 'simple']);
      expect(g.stdout).toMatch(/^lease [0-9a-f]{16} granted with TTL\(600s\)$/);
      const id = g.stdout.split(' ')[1]!;
      expect((await ctl(['lease', 'timetolive', id])).stdout.trim()).toMatch(
        new RegExp(`^lease ${id} granted with TTL\\(600s\\), remaining\\((59\\d|600)s\\)$`),
      );
      const id2 = /lease ([0-9a-f]+) granted/.exec((await ctl(['lease', 'grant', '600'])).stdout)![1]!.padStart(16, '0');
      expect((await ctl(['put', 'leased', 'v', `--lease=${id2}`])).exitCode).toBe(0);
      const ttl = await ops(['lease', 'timetolive', id2, '--keys', '-w', 'simple']);
      expect(ttl.stdout.trim()).toMatch(new RegExp(`^lease ${id2} granted with TTL\\(600s\\), remaining\\((59\\d|600)s\\), attached keys\\(\\[leased\\]\\)$`));
      const ka = await ops(['lease', 'keep-alive', id2, '--once', '-w', 'simple']);
      expect(ka.stdout.trim()).toBe(`lease ${id2} keepalived with TTL(600)`);
      const list = await ops(['lease', 'list', '-w', 'simple']);
      if (after(minor, '3.3')) {
        expect(list.exitCode, says(list)).toBe(0);
        expect(list.stdout.trim().split('\n').sort()).toEqual((await ctl(['lease', 'list'])).stdout.trim().split('\n').sort());
      } else {
        expect(list.exitCode).toBe(1);
        expect(list.stderr).toContain(`lease list: etcd ${minor}.`);
        expect(list.stderr).toContain('it came in 3.3');
      }
      // revoked by opsctl: the key is gone, and an expired lease "already expired" (the seed), exit 0
      expect((await ops(['lease', 'revoke', id2, '-w', 'simple'])).stdout.trim()).toBe(`lease ${id2} revoked`);
      expect((await ctl(['get', 'leased'])).stdout.trim()).toBe('');
      const gone = await ops(['lease', 'timetolive', id2, '-w', 'simple']);
      expect(gone.exitCode).toBe(0);
      expect(gone.stdout.trim()).toBe(`lease ${id2} already expired`);
      const goneTheirs = (await ctl(['lease', 'timetolive', id2])).stdout.trim();
      // 3.3 and later say so too; 3.2's etcdctl still prints TTL 0s, remaining -1s
      expect(goneTheirs).toBe(after(minor, '3.3') ? `lease ${id2} already expired` : `lease ${id2} granted with TTL(0s), remaining(-1s)`);
      const kaGone = await ops(['lease', 'keep-alive', id2, '--once']);
      expect(kaGone.exitCode).toBe(1);
      expect(kaGone.stderr).toContain(`lease ${id2} expired or revoked`);

      // del: the count, as etcdctl prints it
      for (const k of ['p/1', 'p/2', 'p/3']) await ctl(['put', k, 'x']);
      expect((await ops(['del', 'p/', '--prefix', '-w', 'simple'])).stdout.trim()).toBe('3');
      expect((await ctl(['get', 'p/', '--prefix', '--count-only', '-w', 'json'])).stdout).not.toMatch(/"count":[1-9]/);
      expect((await ops(['del', 'nothing-here', '-w', 'simple'])).stdout.trim()).toBe('0');

      // txn: the same text, the same lines (on keys of their own)
      const txnText = (k: string) => `mod("${k}") = "0"\n\nput ${k} "first"\nget ${k}\n\nget ${k}\n\n`;
      const mineTxn = await ops(['txn', '-w', 'simple'], txnText('t1'));
      const theirsTxn = await execa(join(bin, 'etcdctl'), ['--endpoints', eps.join(','), 'txn'], {
        reject: false,
        env: { ETCDCTL_API: '3' },
        input: txnText('t2'),
      });
      expect(mineTxn.exitCode, says(mineTxn)).toBe(0);
      expect(mineTxn.stdout.trim()).toBe(theirsTxn.stdout.trim().replace(/t2/g, 't1'));
      expect(mineTxn.stdout.trim()).toBe('SUCCESS\n\nOK\n\nt1\nfirst');
      const again = await ops(['txn', '-w', 'simple'], txnText('t1'));
      expect(again.stdout.trim()).toBe('FAILURE\n\nt1\nfirst');
      const bad = await ops(['txn'], 'mod(t1) = "0"\n\n\n\n');
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain('compare 1');

      // watch from a revision: the history as etcdctl watch prints it
      const rev = /"revision":"?(\d+)/.exec((await ctl(['put', 'w', 'one', '-w', 'json'])).stdout)![1]!;
      await ctl(['del', 'w']);
      const w = await ops(['watch', 'w', '--rev', rev, '--max-events', '2', '-w', 'simple']);
      expect(w.exitCode, says(w)).toBe(0);
      expect(w.stdout.trimEnd()).toBe('PUT\nw\none\nDELETE\nw');
      // --json: etcdctl's field names (snake_case, as kv get --json), the key and value as text
      const wj = await ops(['watch', 'w', '--rev', rev, '--max-events', '1', '--json']);
      expect(JSON.parse(wj.stdout.trim())).toMatchObject({
        type: 'PUT',
        key: 'w',
        value: 'one',
        create_revision: Number(rev),
        mod_revision: Number(rev),
        version: 1,
      });
      const tj = await ops(['txn', '--json'], 'mod("t1") > "0"\n\nget t1\n\n\n');
      expect(JSON.parse(tj.stdout)).toMatchObject({
        succeeded: true,
        responses: [{ kind: 'get', count: 1, kvs: [{ key: 't1', value: 'first', version: 1, lease: null }] }],
      });
      await ctl(['put', 'pj', 'first']);
      const theirsGet = JSON.parse((await ctl(['get', 'pj', '-w', 'json'])).stdout) as { kvs: Array<{ create_revision: number }> };
      const pj = await ops(['put', 'pj', 'second', '--prev-kv', '--json']);
      const made = Number(theirsGet.kvs[0]!.create_revision);
      expect(JSON.parse(pj.stdout).prev_kv).toEqual({ key: 'pj', value: 'first', create_revision: made, mod_revision: made, version: 1, lease: null });

      // alarms: none raised, nothing printed, exit 0 (as etcdctl)
      const al = await ops(['alarm', 'list', '-w', 'simple']);
      expect([al.exitCode, al.stdout.trim()]).toEqual([0, (await ctl(['alarm', 'list'])).stdout.trim()]);

      // hashkv: the same hash as etcdctl at one revision (3.3+); 3.2 has none
      const now = /"revision":"?(\d+)/.exec((await ctl(['put', 'h', 'x', '-w', 'json'])).stdout)![1]!;
      const hk = await ops(['endpoint', 'hashkv', '--rev', now, '--etcdctl', join(bin, 'etcdctl'), '-w', 'simple']);
      if (after(minor, '3.3')) {
        expect(hk.exitCode, says(hk)).toBe(0);
        const theirsHk = (await ctl(['endpoint', 'hashkv', '--rev', now, '-w', 'simple'])).stdout.trim().split('\n');
        const hashes = (s: string[]) => new Set(s.map((l) => l.split(', ')[1]));
        expect(hashes(hk.stdout.trim().split('\n'))).toEqual(hashes(theirsHk));
        expect(hashes(theirsHk).size).toBe(1);
      } else {
        expect(hk.exitCode).toBe(1);
        expect(hk.stderr).toContain('has no HashKV (it came in 3.3)');
      }

      // compact: older revisions gone for etcdctl too
      expect((await ops(['compact', now, '-w', 'simple'])).stdout.trim()).toBe(`compacted revision ${now}`);
      const old = await ctl(['get', 'w', `--rev=${Number(now) - 1}`]);
      expect(old.exitCode).toBe(1);
      expect(old.stderr).toMatch(/compacted/);
      const twice = await ops(['compact', '1']);
      expect(twice.exitCode).toBe(1);
      expect(twice.stderr).toMatch(/compacted/);

      // defrag: every member, etcdctl's line each
      const df = await ops(['defrag', '-w', 'simple']);
      expect(df.exitCode, says(df)).toBe(0);
      // etcdctl's line of this version: 3.6 adds how long it took
      const defragged = (out: string) =>
        out
          .trim()
          .split('\n')
          .map((l) => l.replace(/\. took [\d.]+(ns|µs|ms|s)$/, '. took T'))
          .sort();
      const tookTail = after(minor, '3.6') ? '. took T' : '';
      expect(defragged(df.stdout)).toEqual(eps.map((e) => `Finished defragmenting etcd member[${e}]${tookTail}`).sort());
      expect(defragged((await ctl(['defrag'])).stdout)).toEqual(defragged(df.stdout));

      // move-leader: a follower leads after it (3.3+); 3.2 refused naming the version
      const follower = mine.find((x) => !x.leader)!;
      const mv = await ops(['move-leader', follower.id, '-w', 'simple']);
      if (after(minor, '3.3')) {
        expect(mv.exitCode, says(mv)).toBe(0);
        expect(mv.stdout.trim()).toMatch(new RegExp(`^Leadership transferred from [0-9a-f]+ to ${follower.id}$`));
        // etcdctl of this version sees the follower lead (its leader column: 5th, 9th from 3.6)
        await until(
          async () =>
            (await ctl(['endpoint', 'status', '-w', 'simple'])).stdout
              .split('\n')
              .some((l) => l.split(', ')[1] === follower.id && l.split(', ')[after(minor, '3.6') ? 8 : 4] === 'true'),
          30_000,
          `${follower.id} leading`,
        );
      } else {
        expect(mv.exitCode).toBe(1);
        expect(mv.stderr).toContain('it came in 3.3');
      }

      // member add (unstarted), update, remove: etcdctl's member list follows; promote of a learner that never caught up: refused as etcdctl is
      // (etcd refuses a member added within 5 s of a member becoming active: "unhealthy cluster"; an operator waits and tries again)
      let add = await ops(['member', 'add', 'extra', '--peer-urls', 'http://127.0.0.1:1', ...(after(minor, '3.4') ? ['--learner'] : []), '-w', 'simple']);
      await until(
        async () => {
          if (add.exitCode !== 0 && /unhealthy cluster/.test(add.stderr))
            add = await ops(['member', 'add', 'extra', '--peer-urls', 'http://127.0.0.1:1', ...(after(minor, '3.4') ? ['--learner'] : []), '-w', 'simple']);
          return add.exitCode === 0 || !/unhealthy cluster/.test(add.stderr);
        },
        30_000,
        'etcd to take a new member',
      );
      expect(add.exitCode, says(add)).toBe(0);
      const newId = /^Member\s+([0-9a-f]+) added/.exec(add.stdout)![1]!;
      expect(add.stdout).toContain('ETCD_INITIAL_CLUSTER_STATE="existing"');
      // (etcdctl asks one member, which serves its member list as it has applied it: 3.4's not linearizable; a
      // follower may not have applied the change yet, so each is awaited, as an operator would look again)
      const listed = async (line: RegExp) => line.test((await ctl(['member', 'list'])).stdout);
      await until(() => listed(new RegExp(`^${newId}, unstarted, , http://127\\.0\\.0\\.1:1, `, 'm')), 30_000, `etcdctl to list ${newId}`);
      expect((await ops(['member', 'update', newId, '--peer-urls', 'http://127.0.0.1:2'])).exitCode).toBe(0);
      await until(() => listed(new RegExp(`^${newId}, unstarted, , http://127\\.0\\.0\\.1:2`, 'm')), 30_000, `etcdctl to list ${newId}'s new peer URL`);
      const promote = await ops(['member', 'promote', newId]);
      expect(promote.exitCode).toBe(1);
      if (after(minor, '3.4')) {
        expect(promote.stderr).toMatch(/etcd refused: .*(in sync|not started|learner)/i);
        const theirsPromote = await ctl(['member', 'promote', newId]);
        expect(theirsPromote.exitCode).toBe(1);
      } else expect(promote.stderr).toContain('it came in 3.4');
      // a removal is asked first: piped without --yes it is refused (exit 2), --dry-run shows it, both change nothing
      const unasked = await ops(['member', 'remove', newId]);
      expect(unasked.exitCode).toBe(2);
      expect(unasked.stderr).toContain('pass --yes');
      const dry = await ops(['member', 'remove', newId, '--dry-run']);
      expect(dry.exitCode).toBe(0);
      expect(dry.stderr).toContain(`would remove member ${newId}`);
      expect((await ctl(['member', 'list'])).stdout).toContain(newId);
      const rm = await ops(['member', 'remove', newId, '-w', 'simple', '--yes']);
      expect(rm.stdout.trim()).toMatch(new RegExp(`^Member\\s+${newId} removed from cluster\\s+[0-9a-f]+$`));
      expect((await ctl(['member', 'list'])).stdout).not.toContain(newId);
      const rmAgain = await ops(['member', 'remove', newId, '--yes']);
      expect(rmAgain.exitCode).toBe(1);
      expect(rmAgain.stderr).toMatch(/member not found/i);

      // on a terminal: txn asks each block as etcdctl -i does; endpoint health is a table with a unit
      if (minor === '3.4' && ptyAvailable()) {
        const env = { ...process.env, OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1' };
        const endpoints = c.members.map((m) => m.clientUrl).join(',');
        const tty = PtySession.opsctl(['kv', 'txn', '--endpoints', endpoints], { env });
        await tty.waitFor('compares:');
        tty.type('value("t1") = "first"\r\r');
        await tty.waitFor('success requests (get, put, del):');
        tty.type('put t1 "second"\r\r');
        await tty.waitFor('failure requests (get, put, del):');
        tty.type('\r');
        expect(await tty.exitCode()).toBe(0);
        expect(tty.text).toMatch(/SUCCESS\s+OK/);
        expect((await ctl(['get', 't1', '--print-value-only'])).stdout.trim()).toBe('second');
        const table = PtySession.opsctl(['kv', 'endpoint', 'health', '--endpoints', endpoints], { env, cols: 100 });
        expect(await table.exitCode()).toBe(0);
        expect(table.text).toMatch(/ENDPOINT\s+HEALTHY\s+TOOK/i);
        expect(table.text).toMatch(/127\.0\.0\.1:\d+\s+true\s+[\d.]+ ms/);
        // a terminal of 0 columns (a serial console, a CI pty): the same rows, nothing hangs; the member list too
        for (const args of [
          ['endpoint', 'health'],
          ['member', 'list'],
          ['defrag', '--cluster'],
        ]) {
          const narrow = PtySession.opsctl(['kv', ...args, '--endpoints', endpoints], { env, cols: 0 });
          expect(await narrow.exitCode(), `${args.join(' ')}: ${narrow.text}`).toBe(0);
          expect(narrow.text.match(/127\.0\.0\.1:\d+/g)?.length, args.join(' ')).toBeGreaterThanOrEqual(3);
        }
      }

      // a lease id that is not one: a usage error naming the argument
      const badId = await ops(['lease', 'timetolive', 'not-an-id']);
      expect(badId.exitCode).toBe(2);
      expect(badId.stderr).toContain('lease-id');
    }, 240_000);
  }
});

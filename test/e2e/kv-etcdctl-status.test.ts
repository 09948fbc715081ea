import { afterAll, describe, expect, it } from 'vitest';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, ladderVersions, minorAtLeast } from '../helpers/etcd-releases.js';
import { bigJson, hexOf, says, sideBySide } from '../helpers/etcdctl-side.js';
import { until } from '../helpers/kv.js';

/**
 * `kv endpoint status` against etcdctl on a member of every version 3.2 … 3.7: etcdctl's own lines
 * (-w simple) byte for byte as that version's etcdctl prints them; every column of etcdctl 3.6's
 * 16 (endpoint, id, version, storage version, db size, in use, percentage not in use, quota, is
 * leader, is learner, raft term, raft index, raft applied index, errors, downgrade target version,
 * downgrade enabled) in opsctl's table (TSV when piped) and --json, the same facts as etcdctl 3.6
 * reads from that member, but where the member's version does not give a fact: opsctl leaves it blank
 * (null in --json) where etcdctl 3.6 prints a zero (docs/kv-etcdctl.md). Then, on 3-member 3.4 and 3.6
 * clusters: ids in hex in kv status, a member named wherever an id goes, a dead member's reason, and a
 * lease that is not there.
 */
const dirs = etcdLadderDirs();
const VERSIONS = ladderVersions(dirs);

/** The facts of etcdctl's -w json of one member, as opsctl's --json names them (null: the member does not give it). */
function asFacts(status: Record<string, unknown>, minor: string) {
  const s = status as Record<string, string | number | boolean | string[] | Record<string, unknown> | undefined> & { header: Record<string, unknown> };
  const n = (v: unknown) => (v === undefined ? 0 : Number(v));
  const id = hexOf(s.header.member_id);
  const from36 = minorAtLeast(minor, '3.6');
  const inUse = s.dbSizeInUse === undefined ? null : n(s.dbSizeInUse);
  return {
    id,
    version: s.version,
    storage_version: from36 ? (s.storageVersion ?? '') : null,
    db_size: n(s.dbSize),
    db_size_in_use: minorAtLeast(minor, '3.4') ? inUse : null,
    not_in_use_percent: inUse === null ? null : n(s.dbSize) ? 100 - Math.floor((inUse * 100) / n(s.dbSize)) : 0,
    db_size_quota: from36 ? n(s.dbSizeQuota) : null,
    leader: hexOf(s.leader) === id,
    leader_id: hexOf(s.leader),
    learner: minorAtLeast(minor, '3.4') ? s.isLearner === true : null,
    raft_term: n(s.raftTerm),
    raft_index: n(s.raftIndex),
    raft_applied_index: minorAtLeast(minor, '3.4') ? n(s.raftAppliedIndex) : null,
    revision: n(s.header.revision),
    errors: (s.errors as string[] | undefined) ?? [],
    downgrade_target_version: from36 ? String((s.downgradeInfo as { targetVersion?: string } | undefined)?.targetVersion ?? '') : null,
    downgrade_enabled: from36 ? (s.downgradeInfo as { enabled?: boolean } | undefined)?.enabled === true : null,
  };
}

describe.runIf(Boolean(dirs))('kv endpoint status: every fact etcdctl gives, on every version', () => {
  const cfg = tempConfigDir('opsctl-etcdctl-status-');
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    cfg.cleanup();
  });
  const etcdctl36 = dirs?.v36 ?? '';

  for (const [minor, bin] of VERSIONS) {
    it(`etcd ${minor}: etcdctl ${minor}'s lines, and etcdctl 3.6's 16 columns in the table, TSV and --json`, async () => {
      const c = await startCluster({ members: 'real', configDir: cfg.dir, size: 1, bins: { [minor]: bin } });
      clusters.push(c);
      c.real.start(c.members[0]!, minor);
      const ep = c.members[0]!.clientUrl.replace('http://', '');
      const { ctl, ops } = sideBySide(bin, [ep], cfg.dir);
      const newest = sideBySide(etcdctl36, [ep], cfg.dir).ctl;
      await until(async () => (await ctl(['endpoint', 'health'])).exitCode === 0, 60_000, `etcd ${minor} healthy`);
      await ctl(['put', 'k', 'v']);

      // read when nothing moved between etcdctl's two looks (an idle member: at once)
      await until(
        async () => {
          const before = await ctl(['endpoint', 'status', '-w', 'json']);
          const simple = await ops(['endpoint', 'status', '-w', 'simple']);
          const theirs = await ctl(['endpoint', 'status']);
          const tsv = await ops(['endpoint', 'status']);
          const json = await ops(['endpoint', 'status', '--json']);
          const wide = await newest(['endpoint', 'status']);
          const after = await ctl(['endpoint', 'status', '-w', 'json']);
          if (before.stdout !== after.stdout) return false;
          for (const r of [before, simple, theirs, tsv, json, wide]) expect(r.exitCode, says(r)).toBe(0);

          // etcdctl's own lines, as this version's etcdctl prints them
          expect(simple.stdout).toBe(theirs.stdout);
          // --json: the facts of etcdctl's JSON of this version
          const status = (bigJson(before.stdout) as Array<{ Endpoint: string; Status: Record<string, unknown> }>)[0]!;
          expect(JSON.parse(json.stdout)).toEqual([{ endpoint: ep, ...asFacts(status.Status, minor) }]);
          // the table piped: etcdctl 3.6's 16 columns, blank where this version does not give the fact
          const mine = tsv.stdout.split('\t');
          const his = wide.stdout.split(', ');
          expect(mine).toHaveLength(16);
          expect(his).toHaveLength(16);
          const given = (i: number) =>
            [4, 8, 10, 11, 13].includes(i) ||
            i <= 2 ||
            ([5, 6, 9, 12].includes(i) && minorAtLeast(minor, '3.4')) ||
            ([3, 7, 14, 15].includes(i) && minorAtLeast(minor, '3.6'));
          for (let i = 0; i < 16; i++) {
            if (given(i)) expect(mine[i], `column ${i + 1}`).toBe(his[i]);
            else {
              expect(mine[i], `column ${i + 1}: blank where ${minor} does not say`).toBe('');
              // (etcdctl 3.6's zero: with no size in use it finds 100% of the db not in use)
              expect(['', '0 B', '0%', '100%', 'false', '0'], `column ${i + 1}: etcdctl 3.6's zero`).toContain(his[i]);
            }
          }
          return true;
        },
        60_000,
        'two equal looks of etcdctl',
      );
    }, 240_000);
  }
});

describe.runIf(Boolean(dirs))('members by name, ids in hex, a dead member and a lease that is not there (3-member clusters)', () => {
  const cfg = tempConfigDir('opsctl-etcdctl-members-');
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    cfg.cleanup();
  });

  for (const [minor, bin] of VERSIONS.filter(([m]) => ['3.4', '3.6'].includes(m))) {
    it(`etcd ${minor}: kv status, move-leader, member update/promote/remove by name; lease revoke of an unknown lease`, async () => {
      const c = await startCluster({ members: 'real', configDir: cfg.dir, size: 3, bins: { [minor]: bin } });
      clusters.push(c);
      for (const m of c.members) c.real.start(m, minor);
      const eps = c.members.map((m) => m.clientUrl.replace('http://', ''));
      const { ctl, ops } = sideBySide(bin, eps, cfg.dir);
      await until(async () => (await ctl(['endpoint', 'health'])).exitCode === 0, 60_000, `three ${minor} members`);
      const list = (await ctl(['member', 'list'])).stdout.split('\n').map((l) => l.split(', '));
      const idOf = new Map(list.map((row) => [row[2]!, row[0]!]));

      // kv status: each member's id in hex, as etcdctl's member list prints it (the table piped and --json)
      const st = await ops(['status']);
      expect(st.exitCode, says(st)).toBe(0);
      for (const row of st.stdout.split('\n').map((l) => l.split('\t'))) expect(row[2], row[0]).toBe(idOf.get(row[0]!));
      const json = JSON.parse((await ops(['status', '--json'])).stdout) as Array<{ name: string; id: string }>;
      for (const m of json) expect(m.id).toBe(idOf.get(m.name));

      // move-leader by a follower's name: etcdctl sees it lead
      const statuses = JSON.parse((await ops(['endpoint', 'status', '--json'])).stdout) as Array<{ id: string; leader: boolean }>;
      const leaderId = statuses.find((x) => x.leader)?.id;
      const follower = c.members.map((m) => m.name).find((n) => idOf.get(n) !== leaderId)!;
      const mv = await ops(['move-leader', follower, '-w', 'simple']);
      expect(mv.exitCode, says(mv)).toBe(0);
      expect(mv.stdout.trim()).toMatch(new RegExp(`^Leadership transferred from [0-9a-f]+ to ${idOf.get(follower)}$`));
      const leaderColumn = minorAtLeast(minor, '3.6') ? 8 : 4;
      await until(
        async () =>
          (await ctl(['endpoint', 'status'])).stdout.split('\n').some((l) => l.split(', ')[1] === idOf.get(follower) && l.split(', ')[leaderColumn] === 'true'),
        30_000,
        `${follower} leading`,
      );
      // an id as #decimal still goes; a name that is no member is refused naming the members
      const back = c.members.map((m) => m.name).find((n) => n !== follower)!;
      expect((await ops(['move-leader', `#${BigInt(`0x${idOf.get(back)!}`).toString()}`])).exitCode).toBe(0);
      const nobody = await ops(['move-leader', 'etcd9']);
      expect(nobody.exitCode).toBe(2);
      expect(nobody.stderr).toContain('etcd1');

      // member update by name (to the peer URL it has), as etcdctl's by id
      const target = c.members[2]!;
      const up = await ops(['member', 'update', target.name, '--peer-urls', target.peerUrl, '-w', 'simple']);
      expect(up.exitCode, says(up)).toBe(0);
      expect(up.stdout).toMatch(new RegExp(`^Member\\s+${idOf.get(target.name)} updated in cluster\\s+[0-9a-f]+`));
      expect((await ctl(['member', 'update', idOf.get(target.name)!, `--peer-urls=${target.peerUrl}`])).exitCode).toBe(0);
      // promote of a voting member, by name: refused by etcd, as etcdctl's by id
      const promote = await ops(['member', 'promote', target.name]);
      const theirs = await ctl(['member', 'promote', idOf.get(target.name)!]);
      expect([promote.exitCode, theirs.exitCode !== 0]).toEqual([1, true]);
      expect(promote.stderr).toMatch(/etcd refused: .*learner/i);

      // a lease that is not there: not found, in etcd's words, with no advice to check a member's health
      const revoke = await ops(['lease', 'revoke', '1234abcd']);
      expect(revoke.exitCode).toBe(1);
      expect(revoke.stderr).toContain('requested lease not found');
      expect(revoke.stderr).toContain('lease 000000001234abcd is not found');
      expect(revoke.stderr).not.toContain('kv health');
      expect((await ctl(['lease', 'revoke', '1234abcd'])).exitCode).toBe(1);

      // a member down: kv status says why on stderr and in its row (exit 1)
      c.real.stop(target);
      await until(() => !c.alive(target), 30_000, `${target.name} stopped`);
      const down = await ops(['status']);
      expect(down.exitCode).toBe(1);
      expect(down.stderr).toMatch(new RegExp(`${target.name} \\(${target.clientUrl}\\): .*unreachable`));
      const row = down.stdout.split('\n').find((l) => l.startsWith(`${target.name}\t`))!;
      expect(row.split('\t')[8]).toMatch(/unreachable/);
      // and it leaves the cluster by name (asked first: --yes); etcdctl's member list no longer has it
      const rm = await ops(['member', 'remove', target.name, '--yes', '-w', 'simple']);
      expect(rm.exitCode, says(rm)).toBe(0);
      expect((await ctl(['member', 'list'])).stdout).not.toContain(idOf.get(target.name)!);
    }, 240_000);
  }
});

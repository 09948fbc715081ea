import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type KvSandbox } from '../framework/index.js';

/**
 * `kv del` on simulated members (the zero-setup sandbox): a key, a prefix and a range, through the
 * leader and through a follower (which sends the delete on to the leader), on a 3.2 member (the
 * /v3alpha gateway) and a 3.4 one; every member then holds the same keys at the same revision.
 */
let sb: KvSandbox | undefined;
afterEach(async () => {
  await sb?.down();
  sb = undefined;
});

describe('kv del on a simulated sandbox', () => {
  for (const version of ['3.2', '3.4']) {
    it(`${version}: a key, a prefix, a range and a missing key; leader and follower; the members agree after`, async () => {
      sb = (await startCluster({ members: 'simulated', size: 3, version: version })).sandbox;
      for (const k of ['a/1', 'a/2', 'a/3', 'b/1', 'c', 'd']) expect((await sb.kv('put', k, `v-${k}`)).code).toBe(0);
      const members = (await sb.kv('member', 'list', '--json')).json<Array<{ name: string; client_urls: string[] }>>();
      const status = (await sb.kv('endpoint', 'status', '--json')).json<Array<{ endpoint: string; leader: boolean }>>();
      const follower = `http://${status.find((s) => !s.leader)!.endpoint}`;
      const leader = `http://${status.find((s) => s.leader)!.endpoint}`;
      expect(members).toHaveLength(3);

      // a prefix through a follower: its previous keys and values printed as asked
      const prefix = await sb.kv('del', 'a/', '--prefix', '--prev-kv', '--json', '--endpoints', follower);
      expect(prefix.code, prefix.stderr).toBe(0);
      const p = prefix.json<{ deleted: number; prev_kvs: Array<{ key: string; value: string }> }>();
      expect(p.deleted).toBe(3);
      expect(p.prev_kvs.map((x) => `${x.key}=${x.value}`)).toEqual(['a/1=v-a/1', 'a/2=v-a/2', 'a/3=v-a/3']);

      // a range [b/, c] through the leader: b/1 and c go, d stays
      const range = await sb.kv('del', 'b/', 'd', '--json', '--endpoints', leader);
      expect(range.code, range.stderr).toBe(0);
      expect(range.json<{ deleted: number }>().deleted).toBe(2);

      // a key that is not there: 0 deleted, exit 0 (as etcdctl), no new revision
      const rev = (await sb.kv('endpoint', 'status', '--json')).json<Array<{ revision: number }>>()[0]!.revision;
      const none = await sb.kv('del', 'nothing', '--json');
      expect(none.code, none.stderr).toBe(0);
      expect(none.json<{ deleted: number }>().deleted).toBe(0);

      // every member: only d is left, at one revision
      for (const m of members) {
        const keys = await sb.kv('get', '', '--from-key', '--keys-only', '--consistency', 's', '--endpoints', m.client_urls[0]!);
        expect(keys.code, keys.stderr).toBe(0);
        expect(keys.stdout.trim().split('\n'), m.name).toEqual(['d']);
      }
      const revs = (await sb.kv('endpoint', 'status', '--json')).json<Array<{ revision: number }>>().map((s) => s.revision);
      expect(new Set(revs).size).toBe(1);
      expect(revs[0]).toBe(rev);
    }, 120_000);
  }
});

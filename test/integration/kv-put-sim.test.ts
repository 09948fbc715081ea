import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type KvSandbox } from '../framework/index.js';

/**
 * `kv put --prev-kv` on simulated members (the zero-setup sandbox), as on etcd: the key as it was before the
 * put, through the leader and through a follower (which sends the put on to the leader), in `kv get --json`'s
 * shape; nothing before a key's first put. Beside etcdctl on real etcd: test/e2e/kv-etcdctl-verbs.test.ts.
 */
let sb: KvSandbox | undefined;
afterEach(async () => {
  await sb?.down();
  sb = undefined;
});

describe('kv put --prev-kv on a simulated sandbox', () => {
  it('the value before, through the leader and a follower; none for a new key', async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.4' })).sandbox;
    const status = (await sb.kv('endpoint', 'status', '--json')).json<Array<{ endpoint: string; leader: boolean }>>();
    const follower = `http://${status.find((s) => !s.leader)!.endpoint}`;
    const leader = `http://${status.find((s) => s.leader)!.endpoint}`;

    const first = await sb.kv('put', 'mode', 'slow', '--prev-kv', '--json', '--endpoints', leader);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json<{ prev_kv: unknown }>().prev_kv).toBeNull();
    const created = first.json<{ revision: number }>().revision;

    const second = await sb.kv('put', 'mode', 'fast', '--prev-kv', '--json', '--endpoints', follower);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json<{ prev_kv: unknown }>().prev_kv).toEqual({
      key: 'mode',
      value: 'slow',
      create_revision: created,
      mod_revision: created,
      version: 1,
      lease: null,
    });

    const third = await sb.kv('put', 'mode', 'faster', '--prev-kv', '--endpoints', leader);
    expect([third.code, third.stdout]).toEqual([0, 'fast\n']);
    const now = (await sb.kv('get', 'mode', '--json')).json<{ kvs: Array<{ value: string; version: number; create_revision: number }> }>();
    expect(now.kvs[0]).toMatchObject({ value: 'faster', version: 3, create_revision: created });
  });
});

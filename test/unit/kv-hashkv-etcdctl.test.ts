import { describe, expect, it } from 'vitest';
import { parseEtcdctlHashes } from '../../src/kv/cluster/hashkv.js';

/**
 * HashKV of every member through ONE etcdctl (`etcdctl endpoint hashkv --endpoints a,b,c --rev R -w json`):
 * its stdout is one JSON array of the endpoints that answered, its stderr one "Failed to get the hash of
 * endpoint EP (ERR)" line per endpoint that did not. The texts below are etcdctl 3.4.23's, captured against
 * a real 3-member cluster (one member stopped for the last case).
 */
const members = [
  { name: 'etcd1', endpoint: 'http://127.0.0.1:27784' },
  { name: 'etcd2', endpoint: 'http://127.0.0.1:15990' },
  { name: 'etcd3', endpoint: 'http://127.0.0.1:23780' },
];
const row = (ep: string, hash: number) =>
  `{"Endpoint":"${ep}","HashKV":{"header":{"cluster_id":5248756774352878391,"member_id":17936338853292914173,"revision":2,"raft_term":2},"hash":${hash},"compact_revision":-1}}`;

describe('kv HashKV through one etcdctl for all members', () => {
  it('reads each member its own hash, by endpoint, whatever the order of the answers', () => {
    const out = `[${row(members[2]!.endpoint, 11)},${row(members[0]!.endpoint, 3628877040)},${row(members[1]!.endpoint, 3628877040)}]\n`;
    const got = parseEtcdctlHashes(members, out, '', 0);
    expect(Object.fromEntries(got)).toEqual({ etcd1: { hash: '3628877040' }, etcd2: { hash: '3628877040' }, etcd3: { hash: '11' } });
  });

  it('a member that did not answer gets its own error; the others keep their hashes', () => {
    const out = `[${row(members[0]!.endpoint, 3628877040)},${row(members[2]!.endpoint, 3628877040)}]\n`;
    const err = [
      '{"level":"warn","ts":"2026-11-24T13:24:01.649Z","caller":"clientv3/retry_interceptor.go:62","msg":"retrying of unary invoker failed"}',
      'Failed to get the hash of endpoint http://127.0.0.1:15990 (context deadline exceeded)',
      'Error: context deadline exceeded',
      '',
    ].join('\n');
    const got = parseEtcdctlHashes(members, out, err, 1);
    expect(got.get('etcd1')).toEqual({ hash: '3628877040' });
    expect(got.get('etcd2')).toEqual({ error: 'context deadline exceeded' });
    expect(got.get('etcd3')).toEqual({ hash: '3628877040' });
  });

  it('a revision no member has yet: every member says so (the comparison asks again at a newer one)', () => {
    const err = members.map((m) => `Failed to get the hash of endpoint ${m.endpoint} (etcdserver: mvcc: required revision is a future revision)`).join('\n');
    const got = parseEtcdctlHashes(members, '[]\n', `${err}\nError: etcdserver: mvcc: required revision is a future revision\n`, 1);
    for (const m of members) expect(got.get(m.name)).toEqual({ error: 'etcdserver: mvcc: required revision is a future revision' });
  });

  it('etcdctl that printed nothing usable (a bad flag, a crash): each member gets its last error line, never a silent pass', () => {
    const got = parseEtcdctlHashes(members, '', 'Error: unknown flag: --rev\n', 1);
    for (const m of members) expect(got.get(m.name)).toEqual({ error: 'unknown flag: --rev' });
    const none = parseEtcdctlHashes(members, 'not json', '', 2);
    expect(none.get('etcd1')).toEqual({ error: 'etcdctl endpoint hashkv exit 2 without an answer for http://127.0.0.1:27784' });
  });
});

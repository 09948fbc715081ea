import { describe, expect, it } from 'vitest';
import { parseId, prefixEnd64 } from '../../src/kv/ops/ids.js';
import { activeAlarmsError, alarmLine, defragLine, goDuration, healthLine, humanBytes, timeToLiveLine } from '../../src/kv/ops/simple.js';
import { parseTxn, words } from '../../src/kv/ops/txn.js';

describe("etcdctl's simple lines", () => {
  it('durations as Go prints them, sizes as go-humanize does', () => {
    expect([goDuration(1_081_364), goDuration(850_000), goDuration(999), goDuration(1_500_000_000), goDuration(62_000_000_000), goDuration(0)]).toEqual([
      '1.081364ms',
      '850µs',
      '999ns',
      '1.5s',
      '1m2s',
      '0s',
    ]);
    expect([humanBytes(9), humanBytes(20_480), humanBytes(16_384), humanBytes(2_147_483_648), humanBytes(1_234_567)]).toEqual([
      '9 B',
      '20 kB',
      '16 kB',
      '2.1 GB',
      '1.2 MB',
    ]);
  });

  it("defrag's line per member as its version's etcdctl prints it: 3.6 adds the time, on success and on failure", () => {
    expect(defragLine('127.0.0.1:2379', '3.5.35', 23_493_210)).toBe('Finished defragmenting etcd member[127.0.0.1:2379]');
    expect(defragLine('127.0.0.1:2379', '3.2.32', 1, 'context deadline exceeded')).toBe(
      'Failed to defragment etcd member[127.0.0.1:2379] (context deadline exceeded)',
    );
    expect(defragLine('127.0.0.1:2379', '3.6.16', 23_493_210)).toBe('Finished defragmenting etcd member[127.0.0.1:2379]. took 23.49321ms');
    expect(defragLine('127.0.0.1:2379', '3.6.0', 2_000_000_000, 'context deadline exceeded')).toBe(
      'Failed to defragment etcd member[127.0.0.1:2379]. took 2s. (context deadline exceeded)',
    );
    // a member whose version could not be read: the older, shorter line
    expect(defragLine('127.0.0.1:2379', undefined, 5)).toBe('Finished defragmenting etcd member[127.0.0.1:2379]');
  });

  it("a raised alarm: alarm list's line and endpoint health's, each ending in a space as etcdctl 3.5+ prints them", () => {
    const nospace = { memberId: '13668033151171901709', alarm: 'NOSPACE' };
    expect(alarmLine(nospace)).toBe('memberID:13668033151171901709 alarm:NOSPACE ');
    expect(healthLine({ ep: '127.0.0.1:2379', ok: false, tookNs: 1_000_000, error: activeAlarmsError([nospace]) })).toBe(
      '127.0.0.1:2379 is unhealthy: failed to commit proposal: Active Alarm(s): NOSPACE ',
    );
    // one kind after the other, each with its space; a kind etcdctl does not name is UNKNOWN
    expect(activeAlarmsError([nospace, { memberId: '1', alarm: 'CORRUPT' }, { memberId: '2', alarm: 'SOMETHING' }])).toBe(
      'Active Alarm(s): NOSPACE CORRUPT UNKNOWN ',
    );
  });

  it('a lease etcd no longer has "already expired"; one it has, its TTLs and keys', () => {
    expect(timeToLiveLine({ id: '1418812076597257222', ttl: -1, grantedTtl: 0, expired: true })).toBe('lease 13b0a211049d2406 already expired');
    expect(timeToLiveLine({ id: '7', ttl: 59, grantedTtl: 60, keys: ['a', 'b'], expired: false })).toBe(
      'lease 0000000000000007 granted with TTL(60s), remaining(59s), attached keys([a b])',
    );
  });
});

describe('ids and ranges', () => {
  it('hex as etcdctl prints it, 0x…, or #decimal; anything else names the argument', () => {
    expect([parseId('694d77aa9e38260f', 'lease-id'), parseId('0x10', 'lease-id'), parseId('#42', 'lease-id')]).toEqual(['7587852521871779343', '16', '42']);
    expect(() => parseId('zz', 'lease-id')).toThrow(/lease-id: "zz" is not an id/);
  });

  it("a prefix's end raises its last byte; an empty prefix is every key", () => {
    expect(Buffer.from(prefixEnd64('a/'), 'base64').toString()).toBe('a0');
    expect(Buffer.from(prefixEnd64(''), 'base64')).toEqual(Buffer.from([0]));
  });
});

describe("etcdctl's txn language", () => {
  it('three blocks: compares, success and failure requests, words quoted as etcdctl splits them', () => {
    const t = parseTxn('mod("k") > "0"\nvalue("k") != "x y"\n\nput k "a \\"b\\""\nget k z\n\ndel k\n', 'stdin');
    expect(t.compare).toEqual([
      { key: 'aw==', target: 'MOD', result: 'GREATER', mod_revision: '0' },
      { key: 'aw==', target: 'VALUE', result: 'NOT_EQUAL', value: Buffer.from('x y').toString('base64') },
    ]);
    expect(t.success).toEqual([
      { request_put: { key: 'aw==', value: Buffer.from('a "b"').toString('base64') } },
      { request_range: { key: 'aw==', range_end: 'eg==' } },
    ]);
    expect(t.failure).toEqual([{ request_delete_range: { key: 'aw==' } }]);
    expect(words('put "a b" c', 'x')).toEqual(['put', 'a b', 'c']);
  });

  it('a line that is not a compare or a request: a usage error naming the block and line, with the form', () => {
    expect(() => parseTxn('mod(k) = "0"\n', 'f.txt')).toThrow(/f\.txt: compare 1: "mod\(k\) = "0"" is not a compare/);
    expect(() => parseTxn('\nset k v\n', 'f.txt')).toThrow(/f\.txt: success request 1/);
    expect(() => parseTxn('ver("k") = "x"\n', 'f.txt')).toThrow(/compares with a number/);
  });
});

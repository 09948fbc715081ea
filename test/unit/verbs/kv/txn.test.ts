import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, grpcError, GRPC, header, kv } from '../../../helpers/kv-gateway-shapes.js';

/** kv txn (src/commands/kv/txn.ts) against a fake 3.4 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const script = [
  'mod("config/mode") > "0"',
  'value("config/mode") = "fast"',
  '',
  'put config/mode "very fast"',
  'get config/',
  '',
  'del config/a config/m',
  '',
].join('\n');
const mode = { key: 'config/mode', value: 'very fast', create: 4, mod: 8, version: 3 };

describe('kv txn (a fake member)', () => {
  it('etcdctl’s language from stdin: one /kv/txn with the compares and both branches as the gateway takes them', async () => {
    const answer = {
      header: header(etcd1, 8),
      succeeded: true,
      responses: [{ response_put: { header: header(etcd1, 8) } }, { response_range: { header: header(etcd1, 8), kvs: [kv(mode)], count: '1' } }],
    };
    const gw = await start([{ ...etcd1, routes: { '/kv/txn': answer } }]);
    const r = await gw.kv(['txn'], { stdin: script });
    expect(gw.paths()).toEqual(['etcd1 /kv/txn']);
    expect(gw.asked[0]!.body).toEqual({
      compare: [
        { key: b64('config/mode'), target: 'MOD', result: 'GREATER', mod_revision: '0' },
        { key: b64('config/mode'), target: 'VALUE', result: 'EQUAL', value: b64('fast') },
      ],
      success: [{ request_put: { key: b64('config/mode'), value: b64('very fast') } }, { request_range: { key: b64('config/') } }],
      failure: [{ request_delete_range: { key: b64('config/a'), range_end: b64('config/m') } }],
    });
    // etcdctl's lines: the branch, then a blank line and each response (OK for a put, key and value for a get)
    expect([r.code, r.stdout]).toEqual([0, 'SUCCESS\n\nOK\n\nconfig/mode\nvery fast\n']);
    const json = await gw.kv(['txn', '--json'], { stdin: script });
    expect(JSON.parse(json.stdout)).toEqual({
      succeeded: true,
      responses: [
        { kind: 'put' },
        { kind: 'get', count: 1, kvs: [{ key: 'config/mode', value: 'very fast', create_revision: 4, mod_revision: 8, version: 3, lease: null }] },
      ],
    });
  });

  it('the compare fails: FAILURE and the failure branch’s responses (the count deleted), exit 0 as etcdctl', async () => {
    const answer = { header: header(etcd1, 9), responses: [{ response_delete_range: { header: header(etcd1, 9), deleted: '2' } }] };
    const gw = await start([{ ...etcd1, routes: { '/kv/txn': answer } }]);
    const r = await gw.kv(['txn', '-w', 'simple'], { stdin: script });
    expect([r.code, r.stdout]).toEqual([0, 'FAILURE\n\n2\n']);
  });

  it('a compare of a number with a word: exit 2 naming the compare and the fix, before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['txn'], { stdin: 'ver("config/mode") = "one"\n\nput a b\n\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('stdin: compare 1: "ver("config/mode") = "one"": ver compares with a number');
    expect(r.stderr).toContain('e.g. ver("config/mode") = "0"');
    expect(gw.asked).toEqual([]);
  });

  it('a lease compare with a value that is not a lease id in hex: exit 2 naming the compare (it was "unexpected error"), before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['txn'], { stdin: 'lease("config/mode") = "xyz"\n\nput a b\n\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('stdin: compare 1: "lease("config/mode") = "xyz"": lease compares with a lease id in hex');
    expect(r.stderr).not.toContain('unexpected error');
    expect(gw.asked).toEqual([]);
  });

  it('etcd refuses the txn (a key twice in a branch): exit 1 with etcd’s words', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/txn': grpcError(etcd1, GRPC.invalidArgument, 'etcdserver: duplicate key given in txn request') } }]);
    const r = await gw.kv(['txn'], { stdin: '\nput a 1\nput a 2\n\n' });
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('txn: etcd refused: etcdserver: duplicate key given in txn request');
  });
});

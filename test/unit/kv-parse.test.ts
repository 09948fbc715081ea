import { describe, expect, it } from 'vitest';
import { idHex, idString, parseHealth, parseJsonSafe, parseMemberList, parseStatus, parseVersion, previousMinor } from '../../src/kv/cluster/parse.js';

describe('kv /health, parsed leniently', () => {
  // The four bodies real servers sent: 3.2, 3.3 final, the 3.3 release candidates, 3.4+.
  it.each([
    ['3.2: string with a space', '{"health": "true"}'],
    ['3.3 final: string, no space', '{"health":"true"}'],
    ['3.3 rc: boolean and errors', '{"health":true,"errors":[]}'],
    ['3.4+: string and reason', '{"health":"true","reason":""}'],
  ])('%s is healthy with 200', (_name, body) => {
    expect(parseHealth(200, body)).toEqual({ healthy: true, detail: 'healthy' });
  });

  it.each([
    [503, '{"health": "false"}'],
    [503, '{"health":"false","reason":"RAFT NO LEADER"}'],
    [200, '{"health":"false"}'],
    [200, '{"health":false,"errors":["NOSPACE"]}'],
    [503, 'Service Unavailable'],
  ])('HTTP %s %s is unhealthy', (status, body) => {
    const r = parseHealth(status, body);
    expect(r.healthy).toBe(false);
    expect(r.detail).toContain(`HTTP ${status}`);
  });

  it('keeps the reason for messages', () => {
    expect(parseHealth(503, '{"health":"false","reason":"RAFT NO LEADER"}').detail).toContain('RAFT NO LEADER');
  });
});

describe('kv /version', () => {
  it('reads the seed names and real etcd names', () => {
    expect(parseVersion('{"kvserver":"3.2.32","kvcluster":"3.2.0"}')).toEqual({ server: '3.2.32', cluster: '3.2.0', real: false });
    expect(parseVersion('{"etcdserver":"3.4.23","etcdcluster":"3.4.0"}')).toEqual({ server: '3.4.23', cluster: '3.4.0', real: true });
  });
  it('previous minor', () => {
    expect(previousMinor('3.3')).toBe('3.2');
    expect(() => previousMinor('3')).toThrow();
  });
});

describe('uint64 member ids never lose precision', () => {
  const big = '13668033151171901709'; // > 2^53, from a real etcd 3.4
  it('gateway strings stay exact', () => {
    const s = parseStatus(
      `{"header":{"cluster_id":"15118495548433857066","member_id":"${big}","revision":"2","raft_term":"2"},"version":"3.4.23","dbSize":"20480","leader":"${big}","raftIndex":"7","raftTerm":"2"}`,
    );
    expect(s.memberId).toBe(big);
    expect(s.leaderId).toBe(big);
    expect(s.revision).toBe('2');
    expect(s.raftIndex).toBe('7');
  });
  it('etcdctl -w json prints bare numbers: parsed exactly too', () => {
    const out = `[{"Endpoint":"127.0.0.1:2379","Status":{"header":{"cluster_id":15118495548433857066,"member_id":${big},"revision":2,"raft_term":2},"version":"3.4.23","dbSize":20480,"leader":${big},"raftIndex":7}}]`;
    const parsed = parseJsonSafe(out) as Array<{ Status: { dbSize: number } }>;
    const s = parseStatus(parsed[0]!.Status);
    expect(s.memberId).toBe(big);
    expect(s.leaderId).toBe(big);
    expect(parsed[0]?.Status.dbSize).toBe(20480);
    expect(JSON.parse(out)[0].Status.header.member_id.toString()).not.toBe(big); // what plain JSON.parse would do
  });
  it('strings with digits and escapes are left alone', () => {
    expect(parseJsonSafe('{"a":"12345678901234567890","b":"x\\"1234567890123456789","c":[18446744073709551615,-1.5e3]}')).toEqual({
      a: '12345678901234567890',
      b: 'x"1234567890123456789',
      c: ['18446744073709551615', -1500],
    });
  });
  it('member list ids (ID field) and hex forms', () => {
    const list = parseMemberList(`{"members":[{"ID":"${big}","name":"p1","peerURLs":["http://127.0.0.1:2380"],"clientURLs":["http://127.0.0.1:2379"]}]}`);
    expect(list[0]).toEqual({ id: big, name: 'p1', peerUrls: ['http://127.0.0.1:2380'], clientUrls: ['http://127.0.0.1:2379'] });
    expect(idString(`0x${idHex(big)}`)).toBe(big);
    expect(idString(idHex(big))).toBe(big);
    expect(() => idString(Number(big))).toThrow(/precision/);
  });
});

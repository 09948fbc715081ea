/**
 * etcdctl's `-w simple` lines, for the scripts written against them (etcdctl 3.4–3.6's printer_simple,
 * checked side by side with each version's etcdctl in test/e2e/kv-etcdctl-verbs.test.ts).
 */
import { compareMinor, minor } from '../cluster/parse.js';
import { leaseHex, memberHex16 } from './ids.js';
import type { KeyValue, WatchEvent } from './keys.js';
import type { LeaseTtl } from './lease.js';
import type { Alarm, EndpointStatus } from './maintenance.js';
import type { Member } from './members.js';
import type { TxnResponse } from './txn.js';

/** A duration as Go's time.Duration prints it (2.298513ms, 850µs, 1.5s, 1m2s). */
export function goDuration(ns: number): string {
  const n = Math.round(ns);
  if (n === 0) return '0s';
  const trim = (v: number, digits: number) => v.toFixed(digits).replace(/\.?0+$/, '');
  if (n < 1e3) return `${n}ns`;
  if (n < 1e6) return `${trim(n / 1e3, 3)}µs`;
  if (n < 1e9) return `${trim(n / 1e6, 6)}ms`;
  const h = Math.floor(n / 3.6e12);
  const m = Math.floor((n % 3.6e12) / 6e10);
  const s = trim((n % 6e10) / 1e9, 9);
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/** Bytes as go-humanize's Bytes prints them (SI: 20 kB, 1.2 MB, 9 B). */
export function humanBytes(n: number): string {
  if (n < 10) return `${n} B`;
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.floor(Math.log(n) / Math.log(1000));
  const val = Math.floor((n / 1000 ** e) * 10 + 0.5) / 10;
  // Go's %.0f rounds a half to even (20.5 → 20)
  const whole = Math.floor(val);
  const even = val - whole > 0.5 || (val - whole === 0.5 && whole % 2 === 1) ? whole + 1 : whole;
  return `${val < 10 ? val.toFixed(1) : String(even)} ${units[e]}`;
}

export const grantLine = (id: string, ttl: number) => `lease ${leaseHex(id)} granted with TTL(${ttl}s)`;
export const revokeLine = (id: string) => `lease ${leaseHex(id)} revoked`;
export const keepAliveLine = (id: string, ttl: number) => `lease ${leaseHex(id)} keepalived with TTL(${ttl})`;

export function timeToLiveLine(t: LeaseTtl): string {
  if (t.expired) return `lease ${leaseHex(t.id)} already expired`;
  return `lease ${leaseHex(t.id)} granted with TTL(${t.grantedTtl}s), remaining(${t.ttl}s)${t.keys ? `, attached keys([${t.keys.join(' ')}])` : ''}`;
}

export const leasesLines = (ids: string[]) => [`found ${ids.length} leases`, ...ids.map(leaseHex)];

/** member list: ID, status, name, peer URLs, client URLs, is learner (3.4+'s columns). */
export const memberRow = (m: Member) => [BigInt(m.id).toString(16), m.status, m.name, m.peerUrls.join(','), m.clientUrls.join(','), String(m.isLearner)];
export const memberLine = (m: Member) => memberRow(m).join(', ');

export const memberAddLines = (m: Member, clusterId: string, all: Member[]) => {
  const named = all.filter((x) => x.name || x.id === m.id);
  return [
    `Member ${memberHex16(m.id)} added${m.isLearner ? ' as learner ' : ' '}to cluster ${memberHex16(clusterId)}`,
    '',
    `ETCD_NAME="${m.name || 'NEW_MEMBER_NAME'}"`,
    `ETCD_INITIAL_CLUSTER="${named.flatMap((x) => x.peerUrls.map((u) => `${x.id === m.id ? m.name || 'NEW_MEMBER_NAME' : x.name}=${u}`)).join(',')}"`,
    `ETCD_INITIAL_ADVERTISE_PEER_URLS="${m.peerUrls.join(',')}"`,
    'ETCD_INITIAL_CLUSTER_STATE="existing"',
  ];
};
export const memberChangeLine = (id: string, verb: 'removed from' | 'updated in' | 'promoted in', clusterId: string) =>
  `Member ${memberHex16(id)} ${verb} cluster ${memberHex16(clusterId)}`;

export const alarmLine = (a: Alarm) => `memberID:${a.memberId} alarm:${a.alarm} `;

/**
 * The error etcdctl 3.5+'s endpoint health gives a member with a raised alarm: "Active Alarm(s): " and
 * each alarm's kind followed by a space (NOSPACE, CORRUPT, any other UNKNOWN), so the line ends in one.
 */
export const activeAlarmsError = (alarms: Alarm[]) =>
  `Active Alarm(s): ${alarms.map((a) => `${a.alarm === 'NOSPACE' || a.alarm === 'CORRUPT' ? a.alarm : 'UNKNOWN'} `).join('')}`;

/**
 * defrag's line per member as that version's etcdctl prints it: 3.6 adds how long it took
 * ("Finished defragmenting etcd member[EP]. took 23.4ms"); a failure goes to stderr there.
 */
export function defragLine(ep: string, version: string | undefined, tookNs: number, error?: string): string {
  const took = version && compareMinor(minor(version) ?? '0.0', '3.6') >= 0 ? `. took ${goDuration(tookNs)}` : '';
  return error ? `Failed to defragment etcd member[${ep}]${took}${took ? '.' : ''} (${error})` : `Finished defragmenting etcd member[${ep}]${took}`;
}

export const healthLine = ({ ep, ok, tookNs, error }: { ep: string; ok: boolean; tookNs: number; error?: string }) =>
  ok ? `${ep} is healthy: successfully committed proposal: took = ${goDuration(tookNs)}` : `${ep} is unhealthy: failed to commit proposal: ${error}`;

/**
 * endpoint status as that version's etcdctl prints it: endpoint, ID, version, db size, is leader, is
 * learner, raft term, raft index, raft applied index, errors (3.4, 3.5); 3.6 adds the storage version,
 * the db size in use, the share not in use, the quota and the downgrade; 3.2 and 3.3 have no learner
 * and no applied index.
 */
export function statusRow(ep: string, s: EndpointStatus): string[] {
  const id = BigInt(s.id).toString(16);
  const raft = [String(s.isLeader), String(s.isLearner), s.raftTerm, s.raftIndex, s.raftAppliedIndex ?? s.raftIndex, s.errors.join(', ')];
  if (s.storageVersion !== undefined) {
    const inUse = s.dbSizeInUse ?? s.dbSize;
    const free = s.dbSize ? `${100 - Math.floor((inUse * 100) / s.dbSize)}%` : '0%';
    return [
      ep,
      id,
      s.version,
      s.storageVersion,
      humanBytes(s.dbSize),
      humanBytes(inUse),
      free,
      humanBytes(s.dbSizeQuota ?? 0),
      ...raft,
      s.downgrade?.target ?? '',
      String(s.downgrade?.enabled ?? false),
    ];
  }
  if (/^3\.[23]\./.test(s.version)) return [ep, id, s.version, humanBytes(s.dbSize), String(s.isLeader), s.raftTerm, s.raftIndex];
  return [ep, id, s.version, humanBytes(s.dbSize), ...raft];
}

export const kvLines = (kv: KeyValue) => [kv.key, kv.value];

export function watchLines(e: WatchEvent): string[] {
  return [e.type, ...(e.prevKv ? kvLines(e.prevKv) : []), ...kvLines(e.kv)];
}

export function txnLines({ succeeded, responses }: { succeeded: boolean; responses: TxnResponse[] }): string[] {
  const out = [succeeded ? 'SUCCESS' : 'FAILURE'];
  for (const r of responses) {
    out.push('');
    if (r.kind === 'put') out.push('OK');
    else if (r.kind === 'del') out.push(String(r.deleted));
    else out.push(...r.kvs.flatMap(kvLines));
  }
  return out;
}

/**
 * Pure parsers for what etcd (and the simulated `kv` member) answers: lenient /health bodies,
 * /version with either naming, gateway JSON whose uint64 ids must never lose precision.
 */

import { asList, asObject, textOf, type JsonObject } from '@opsctl/shared/json.js';
import { compareMinor, gatewayPrefixFor, minor } from '@opsctl/shared/etcd-versions.js';

/**
 * JSON.parse that keeps every integer too large for a double exact, as a decimal string.
 * etcd's gateway sends uint64 as strings, but etcdctl's `-w json` prints them as bare numbers.
 */
export function parseJsonSafe(text: string): unknown {
  // Quote bare integers of 16+ digits that stand as values (after ':' or '[' or ',' outside strings).
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[++i] ?? '';
      } else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i;
      while (j < text.length && /[-+0-9.eE]/.test(text.charAt(j))) j++;
      const num = text.slice(i, j);
      out += /^-?\d{16,}$/.test(num) && !Number.isSafeInteger(Number(num)) ? `"${num}"` : num;
      i = j - 1;
      continue;
    }
    out += c;
  }
  return JSON.parse(out) as unknown;
}

// reading parsed JSON field by field, shared with the mock (packages/shared)
export { asList, asObject, textOf, type JsonObject };
export { compareMinor, gatewayPrefixFor, minor };

/** A uint64 id as a canonical decimal string (accepts strings, safe numbers, bigint, hex "0x…"). */
export function idString(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Error(`member id ${v} lost precision: parse it with parseJsonSafe`);
    return String(v);
  }
  const s = (textOf(v) ?? '').trim();
  if (/^0x[0-9a-f]+$/i.test(s)) return BigInt(s).toString();
  if (/^[0-9a-f]{16}$/i.test(s) && /[a-f]/i.test(s)) return BigInt(`0x${s}`).toString();
  if (/^\d+$/.test(s)) return BigInt(s).toString();
  throw new Error(`"${s}" is not a member id`);
}

/** The id as etcdctl prints it (hex, 16 digits). */
export function idHex(id: string): string {
  return BigInt(id).toString(16).padStart(16, '0');
}

export interface HealthResult {
  healthy: boolean;
  /** What the member said, for messages. */
  detail: string;
}

/**
 * /health, leniently: 200 with `"health":"true"` or `"health":true` (3.2 writes `{"health": "true"}`,
 * 3.3 `{"health":"true"}`, the 3.3 release candidates `{"health":true,"errors":[]}`, 3.4+
 * `{"health":"true","reason":""}`). 503 (or anything else) is unhealthy.
 */
export function parseHealth(status: number, body: string): HealthResult {
  let parsed: JsonObject;
  try {
    parsed = asObject(JSON.parse(body));
  } catch {
    return { healthy: false, detail: `HTTP ${status}: not JSON: ${body.slice(0, 80)}` };
  }
  const h = parsed.health;
  const says = h === true || (typeof h === 'string' && h.trim().toLowerCase() === 'true');
  const why = [parsed.reason, ...asList(parsed.errors)].filter((x) => typeof x === 'string' && x).join('; ');
  if (status === 200 && says) return { healthy: true, detail: 'healthy' };
  return { healthy: false, detail: `HTTP ${status}: health=${JSON.stringify(h)}${why ? ` (${why})` : ''}` };
}

export interface VersionResult {
  server: string;
  cluster: string;
  /** The storage version (etcd 3.6 and later add it to /version). */
  storage?: string;
  /** Real etcd (etcdserver/etcdcluster) rather than the seed's kv names. */
  real: boolean;
}

/** /version: the seed's `kvserver`/`kvcluster` or real etcd's `etcdserver`/`etcdcluster`. */
export function parseVersion(body: string): VersionResult {
  const v = asObject(JSON.parse(body));
  const server = v.kvserver ?? v.etcdserver;
  const cluster = v.kvcluster ?? v.etcdcluster;
  if (typeof server !== 'string') throw new Error(`/version has neither kvserver nor etcdserver: ${body.slice(0, 120)}`);
  const storage = typeof v.storage === 'string' ? v.storage : undefined;
  return { server, cluster: typeof cluster === 'string' ? cluster : 'not_decided', real: v.etcdserver !== undefined, ...(storage ? { storage } : {}) };
}

/** "3.5.21" → [3, 5, 21] ("3.5" → [3, 5, 0]); undefined when it is not a version. */
export function versionParts(version: string | undefined): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

/** Orders two full versions (3.5.9 < 3.5.26); a version that does not parse sorts first. */
export function compareVersion(a: string, b: string): number {
  const x = versionParts(a) ?? [0, 0, 0];
  const y = versionParts(b) ?? [0, 0, 0];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** The minor after `m` ("3.3" → "3.4"). */
export function nextMinor(m: string): string {
  const p = versionParts(m);
  if (!p) throw new Error(`"${m}" is not a minor version like 3.3`);
  return `${p[0]}.${p[1] + 1}`;
}

/** The minor before `target` ("3.3" → "3.2"). */
export function previousMinor(target: string): string {
  const m = /^(\d+)\.(\d+)$/.exec(target);
  if (!m) throw new Error(`"${target}" is not a minor version like 3.3`);
  if (Number(m[2]) === 0) throw new Error(`${target} has no previous minor`);
  return `${m[1]}.${Number(m[2]) - 1}`;
}

/** Read a field by either of its JSON spellings (the gateway mixes snake_case and camelCase). */
export function field(obj: unknown, ...names: string[]): unknown {
  const o = asObject(obj);
  for (const n of names) if (o[n] !== undefined) return o[n];
  return undefined;
}

export interface StatusResult {
  memberId: string;
  leaderId?: string;
  revision: string;
  /** The raft index the member knows committed, and (3.4+) the one it applied up to. */
  raftIndex?: string;
  raftAppliedIndex?: string;
  raftTerm?: string;
  version?: string;
  dbSize?: number;
  /** 3.4+: the member's errors (each alarm raised in the cluster, "etcdserver: no leader"). */
  errors: string[];
}

/** /v3/maintenance/status (gateway) or one `etcdctl endpoint status -w json` entry's Status. */
export function parseStatus(body: string | object): StatusResult {
  const s = asObject(typeof body === 'string' ? parseJsonSafe(body) : body);
  const h = s.header ?? {};
  const version = field(s, 'version');
  return {
    memberId: idString(field(h, 'member_id', 'memberId')) ?? '',
    leaderId: idString(field(s, 'leader')),
    revision: textOf(field(h, 'revision')) ?? '0',
    raftIndex: textOf(field(s, 'raftIndex', 'raft_index')),
    raftAppliedIndex: textOf(field(s, 'raftAppliedIndex', 'raft_applied_index')),
    raftTerm: textOf(field(s, 'raftTerm', 'raft_term')),
    version: typeof version === 'string' ? version : undefined,
    dbSize: field(s, 'dbSize', 'db_size') === undefined ? undefined : Number(field(s, 'dbSize', 'db_size')),
    errors: asList(s.errors).filter((e): e is string => typeof e === 'string'),
  };
}

/**
 * The alarms raised in the cluster as a 3.4+ member's status lists them among its errors, one
 * `memberID:<decimal id> alarm:<NAME>` each (3.4-3.6 end it with a space): what the member's alarm list
 * answers, without asking it (an alarm list is a raft proposal on 3.4 and 3.5). Undefined for a status
 * of 3.2 or 3.3, which carries no errors.
 */
export function statusAlarms(st: StatusResult): AlarmEntry[] | undefined {
  const v = versionParts(st.version);
  if (!v || v[0] < 3 || (v[0] === 3 && v[1] < 4)) return undefined;
  return st.errors.flatMap((e) => {
    const m = /^memberID:(\d+) alarm:([A-Z_]+)\s*$/.exec(e);
    return m && m[2] !== 'NONE' ? [{ memberId: m[1]!, alarm: m[2]! }] : [];
  });
}

export interface MemberListEntry {
  id: string;
  name: string;
  peerUrls: string[];
  clientUrls: string[];
}

export function parseMemberList(body: string): MemberListEntry[] {
  const urls = (v: unknown) => asList(v).filter((u): u is string => typeof u === 'string');
  return asList(asObject(parseJsonSafe(body)).members).map((m) => ({
    id: idString(field(m, 'ID', 'id')) ?? '',
    name: textOf(field(m, 'name')) ?? '',
    peerUrls: urls(field(m, 'peerURLs', 'peer_urls', 'peerUrls')),
    clientUrls: urls(field(m, 'clientURLs', 'client_urls', 'clientUrls')),
  }));
}

export interface AlarmEntry {
  memberId: string;
  alarm: string;
}

export function parseAlarms(body: string): AlarmEntry[] {
  return asList(asObject(parseJsonSafe(body)).alarms)
    .map((a) => ({
      memberId: idString(field(a, 'memberID', 'member_id', 'memberId')) ?? '',
      alarm: textOf(field(a, 'alarm')) ?? 'NONE',
    }))
    .filter((a: AlarmEntry) => a.alarm !== 'NONE');
}

/** The count of raft snapshots saved in a member's /metrics text (etcd_debugging_snap_save_total_duration_seconds, 3.2 to 3.7). */
export function snapshotsSavedOf(metrics: string): number | undefined {
  const n = /^etcd_debugging_snap_save_total_duration_seconds_count (\d+)$/m.exec(metrics)?.[1];
  return n === undefined ? undefined : Number(n);
}

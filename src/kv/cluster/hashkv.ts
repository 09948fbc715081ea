/**
 * Consistency, not only liveness: every member's KV hash at one revision (etcd's maintenance HashKV,
 * 3.3 and later), compared. The 3.3 and 3.4 gateways cannot ask it (their /maintenance/hash is Hash,
 * of the whole database file, which differs per member and ignores the revision; measured on 3.3.27 and
 * 3.4.23); 3.5 and later serve /maintenance/hashkv (`kv endpoint hashkv` uses it there). The upgrade
 * asks real members with `etcdctl endpoint hashkv --rev R` (gRPC), all of them in one etcdctl, so one
 * path serves every hop; the simulated members answer HashKV on their gateway (/maintenance/hashkv). A 3.2 member
 * answers "unknown method HashKV": it is listed as not checked, never silently.
 */
import type { MemberSpec } from './cluster-file.js';
import { KvClient } from './client.js';
import { compareMinor, minor } from './parse.js';
import type { KvSession } from './session.js';
import { etcdctlTlsArgs } from './etcdctl.js';

type Exec = typeof import('execa').execa;

export interface HashEnv {
  session: KvSession;
  timeoutMs: number;
  exec: Exec;
  /** etcdctl (3.3 or later) for real members; undefined: the real members are not checked, and why. */
  etcdctl?: string;
  /** Real etcd (etcdctl over gRPC) or simulated members (their gateway). */
  real: boolean;
  debug?: (line: string) => void;
}

/** What one comparison found, as the journal and the report keep it. */
export interface HashCheck {
  /** When it ran: "before the first stop", "after kv2". */
  at: string;
  revision?: string;
  /** ok: every member compared has one hash; divergent: at least one differs; not-checked: fewer than two could be asked. */
  result: 'ok' | 'divergent' | 'not-checked';
  hashes: Array<{ member: string; hash: string }>;
  /** Members not asked, and why ("HashKV needs etcd 3.3+"). */
  notChecked: Array<{ member: string; why: string }>;
  detail: string;
}

export const HASHKV_MIN = '3.3';

export type HashAnswer = { hash: string } | { error: string };

/** One simulated member's HashKV at `rev`, over its gateway: its hash, or the error it answered. */
async function gatewayHash(env: HashEnv, m: MemberSpec, rev: string): Promise<HashAnswer> {
  try {
    return { hash: await new KvClient(m.endpoint, { session: env.session, timeoutMs: env.timeoutMs, debug: env.debug }).hashKv(rev) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Every asked member's HashKV at `rev` through ONE etcdctl (`endpoint hashkv --endpoints a,b,c`): one
 * Go start-up per comparison instead of one per member (on a busy 2-core machine each start-up costs
 * tens of milliseconds of CPU the members need). etcdctl asks the endpoints one after the other, prints
 * the answers as one JSON array and "Failed to get the hash of endpoint EP (ERR)" for each that failed
 * (etcdctl 3.3 to 3.6 alike), then exits 1 if any did.
 */
export async function etcdctlHashes(env: HashEnv, members: MemberSpec[], rev: string): Promise<Map<string, HashAnswer>> {
  const env2: Record<string, string> = { ETCDCTL_API: '3', PATH: '/usr/local/bin:/usr/bin:/bin' };
  const auth = env.session.conn.auth;
  if (auth) env2.ETCDCTL_USER = `${auth.user}:${auth.password}`;
  const args = [
    '--endpoints',
    members.map((m) => m.endpoint).join(','),
    ...etcdctlTlsArgs(env.session.conn),
    '--dial-timeout',
    '5s',
    '--command-timeout',
    `${Math.ceil(env.timeoutMs / 1000)}s`,
    'endpoint',
    'hashkv',
    '--rev',
    rev,
    '-w',
    'json',
  ];
  const r = await env.exec(env.etcdctl!, args, {
    env: env2,
    extendEnv: false,
    timeout: members.length * env.timeoutMs + 10_000,
    reject: false,
    stdin: 'ignore',
  });
  return parseEtcdctlHashes(members, String(r.stdout), String(r.stderr), r.exitCode);
}

/** etcdctl endpoint hashkv's answer (stdout: JSON array; stderr: one line per endpoint that failed), per member. */
export function parseEtcdctlHashes(
  members: Array<Pick<MemberSpec, 'name' | 'endpoint'>>,
  stdout: string,
  stderr: string,
  exitCode?: number,
): Map<string, HashAnswer> {
  const out = new Map<string, HashAnswer>();
  let rows: unknown = [];
  try {
    const text = stdout.trim();
    // uint64 ids in the header lose precision in JSON.parse; only the uint32 hash is read
    if (text) rows = JSON.parse(text);
  } catch {
    rows = [];
  }
  for (const row of Array.isArray(rows) ? (rows as Array<{ Endpoint?: unknown; HashKV?: { hash?: unknown } }>) : []) {
    const m = members.find((x) => x.endpoint === row.Endpoint);
    const hash = row.HashKV?.hash;
    if (m && (typeof hash === 'number' || typeof hash === 'string')) out.set(m.name, { hash: String(hash) });
  }
  const lines = stderr.split('\n');
  for (const m of members) {
    if (out.has(m.name)) continue;
    const said = lines.find((l) => l.startsWith(`Failed to get the hash of endpoint ${m.endpoint} (`));
    const why = said ? said.slice(`Failed to get the hash of endpoint ${m.endpoint} (`.length).replace(/\)\s*$/, '') : undefined;
    const last = lines
      .filter((l) => l.startsWith('Error:'))
      .pop()
      ?.replace(/^Error:\s*/, '');
    out.set(m.name, { error: why ?? last ?? `etcdctl endpoint hashkv exit ${exitCode ?? '?'} without an answer for ${m.endpoint}` });
  }
  return out;
}

/**
 * Every member's KV hash at one revision, compared. The revision is the lowest any member has
 * applied (each has it; under writes the others are a little ahead), asked again if a compaction
 * passed it meanwhile. `versions` are the members' server versions as last observed; `revisions`,
 * when the caller has just looked at every member (the health poll that saw the last one back, the
 * pre-flight), their revisions then: the first attempt uses them instead of asking each status again
 * (revisions only grow, so their lowest is still applied by every member).
 */
export async function compareHashes(
  env: HashEnv,
  members: MemberSpec[],
  versions: Record<string, string | undefined>,
  at: string,
  revisions?: Record<string, string | undefined>,
): Promise<HashCheck> {
  const notChecked: HashCheck['notChecked'] = [];
  const asked: MemberSpec[] = [];
  for (const m of members) {
    const v = versions[m.name];
    const mn = minor(v);
    if (mn && compareMinor(mn, HASHKV_MIN) < 0) notChecked.push({ member: m.name, why: `HashKV needs etcd 3.3+ (${m.name} runs ${v})` });
    else if (env.real && !env.etcdctl)
      notChecked.push({
        member: m.name,
        why: "HashKV is gRPC only (the gateway's /maintenance/hash hashes the whole db file): install etcdctl 3.3+ (etcd-client) or pass --etcdctl PATH",
      });
    else asked.push(m);
  }
  const base = { at, notChecked };
  if (asked.length < 2) {
    const why = notChecked.length ? notChecked.map((n) => n.why).join('; ') : 'fewer than two members to compare';
    return { ...base, result: 'not-checked', hashes: [], detail: `not checked: ${why}` };
  }
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const seen = attempt === 0 && revisions ? asked.map((m) => revisions[m.name]) : [];
    const revs =
      seen.length && seen.every((r) => r !== undefined && /^\d+$/.test(r))
        ? seen.map((r) => BigInt(r!))
        : await Promise.all(
            asked.map((m) =>
              new KvClient(m.endpoint, { session: env.session, timeoutMs: env.timeoutMs, debug: env.debug })
                .status()
                .then((s) => BigInt(s.revision))
                .catch((err: Error) => err),
            ),
          );
    const bad = revs.findIndex((r) => r instanceof Error);
    if (bad >= 0) {
      last = `${asked[bad]!.name} did not answer its status: ${(revs[bad] as Error).message}`;
      continue;
    }
    const rev = (revs as bigint[]).reduce((a, b) => (b < a ? b : a)).toString();
    const answers = env.real ? await etcdctlHashes(env, asked, rev) : undefined;
    const got = await Promise.all(asked.map(async (m) => ({ member: m.name, r: answers?.get(m.name) ?? (await gatewayHash(env, m, rev)) })));
    const failed = got.filter((g) => 'error' in g.r);
    if (failed.length) {
      last = failed.map((g) => `${g.member}: ${(g.r as { error: string }).error}`).join('; ');
      // Compacted past it meanwhile: ask again at a newer revision. Anything else is said as it is.
      if (failed.every((g) => /compacted|future revision/i.test((g.r as { error: string }).error))) continue;
      const unimpl = failed.filter((g) => /unknown method HashKV|Unimplemented/i.test((g.r as { error: string }).error));
      for (const g of unimpl) notChecked.push({ member: g.member, why: `HashKV needs etcd 3.3+ (${g.member} answered "unknown method HashKV")` });
      if (unimpl.length !== failed.length) return { ...base, revision: rev, result: 'not-checked', hashes: [], detail: `not checked: HashKV failed: ${last}` };
      const rest = got.filter((g) => 'hash' in g.r);
      if (rest.length < 2)
        return { ...base, revision: rev, result: 'not-checked', hashes: [], detail: `not checked: ${notChecked.map((n) => n.why).join('; ')}` };
      return judge(
        base,
        rev,
        rest.map((g) => ({ member: g.member, hash: (g.r as { hash: string }).hash })),
      );
    }
    return judge(
      base,
      rev,
      got.map((g) => ({ member: g.member, hash: (g.r as { hash: string }).hash })),
    );
  }
  return { ...base, result: 'not-checked', hashes: [], detail: `not checked: ${last}` };
}

/** One hash: ok. More: the members off the most common hash are named, each with both hashes. */
function judge(base: Pick<HashCheck, 'at' | 'notChecked'>, rev: string, hashes: HashCheck['hashes']): HashCheck {
  const groups = new Map<string, string[]>();
  for (const h of hashes) groups.set(h.hash, [...(groups.get(h.hash) ?? []), h.member]);
  const skipped = base.notChecked.length ? `; not checked: ${base.notChecked.map((n) => n.why).join('; ')}` : '';
  if (groups.size === 1) {
    return {
      ...base,
      revision: rev,
      result: 'ok',
      hashes,
      detail: `KV hash ${hashes[0]!.hash} at revision ${rev} on ${hashes.map((h) => h.member).join(', ')}${skipped}`,
    };
  }
  const sorted = [...groups.entries()].sort((a, b) => b[1].length - a[1].length) as [[string, string[]], [string, string[]]];
  const [major, second] = sorted;
  // No majority (two members, each its own hash): each is named with its hash.
  const detail =
    major[1].length === second[1].length
      ? `KV hashes differ at revision ${rev}: ${hashes.map((h) => `${h.member} has ${h.hash}`).join(', ')}${skipped}`
      : `KV hashes differ at revision ${rev}: ${hashes
          .filter((h) => h.hash !== major[0])
          .map((h) => `${h.member} has ${h.hash}, ${major[1].join(', ')} ${major[1].length === 1 ? 'has' : 'have'} ${major[0]}`)
          .join('; ')}${skipped}`;
  return { ...base, revision: rev, result: 'divergent', hashes, detail };
}

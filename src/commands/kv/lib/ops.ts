/** What the etcdctl-like verbs (lease, member, alarm, endpoint, defrag, compact, move-leader, del, watch, txn) share. */
import type { Context } from '../../../context.js';
import { NetworkError, OpsError } from '../../../core/errors.js';
import type { Column, CommandResult } from '../../../core/output.js';
import { KvClient } from '../../../kv/cluster/client.js';
import type { MemberSpec } from '../../../kv/cluster/cluster-file.js';
import { GatewayError } from '../../../kv/cluster/gateway-errors.js';
import type { KvSession } from '../../../kv/cluster/session.js';
import { resolveConnection, type ConnectionFlags } from './connection.js';
import { fileConnection, findCluster, membersOf, openSession, type TargetFlags } from './target.js';
import { durationFlag } from '../../../core/duration.js';

export interface OpsFlags extends TargetFlags, ConnectionFlags {
  requestTimeout?: string;
  writeOut?: string;
}

/** The cluster an etcdctl-like verb reaches: its members and a client for each. */
export interface Reached {
  members: MemberSpec[];
  /** Members given by endpoint only (--endpoints, ETCDCTL_ENDPOINTS): named host:port until a member list names them. */
  unnamed: boolean;
  session: KvSession;
  requestMs: number;
  client(m: MemberSpec, timeoutMs?: number): KvClient;
  /** The first member that answers `fn` (a member that cannot be reached, or answers 5xx, passes to the next), as etcdctl's balancer. */
  any<T>(fn: (c: KvClient, m: MemberSpec) => Promise<T>): Promise<T>;
}

/**
 * The cluster of an etcdctl-like verb and a client per member, found without any member driver
 * (lib/target.ts): `named` asks the cluster's member list for the names of members given by endpoint only
 * (the verbs that show a row per member name them).
 */
export async function reach(ctx: Context, opts: OpsFlags, { named = false } = {}): Promise<Reached> {
  const found = await findCluster(ctx, opts);
  const session = openSession(ctx, await resolveConnection(ctx, opts, fileConnection(found)));
  const requestMs = requestTimeout(opts);
  const client = (m: MemberSpec, timeoutMs = requestMs) => new KvClient(m.endpoint, { timeoutMs, debug: ctx.debugSink, session });
  const members = membersOf(found);
  if (named && found.source === 'endpoints')
    await nameMembers(
      members,
      (m) => client(m, Math.min(2000, requestMs)),
      (line) => ctx.debug(line),
    );
  return {
    members,
    unnamed: found.source === 'endpoints' && !named,
    session,
    requestMs,
    client,
    async any(fn) {
      let last: unknown;
      for (const m of members) {
        try {
          return await fn(client(m), m);
        } catch (err) {
          if (!(err instanceof NetworkError) && !(err instanceof GatewayError && err.status >= 500)) throw err;
          last = err;
        }
      }
      // every member answered, refusing (503 "unhealthy cluster", …): etcd's own words; a sign-in that
      // timed out says so, with its own fix
      if (last instanceof GatewayError || (last instanceof OpsError && last.code === 'kv_signin_timeout')) throw last;
      throw new NetworkError(`no member answered: ${(last as Error)?.message}`, { hint: 'check the cluster with: opsctl kv endpoint health' });
    },
  };
}

/** --request-timeout (etcdctl's ETCDCTL_COMMAND_TIMEOUT reaches it through lib/etcdctl-env.ts), 3 s by default. */
function requestTimeout(opts: OpsFlags): number {
  return opts.requestTimeout === undefined ? 3000 : durationFlag('--request-timeout', opts.requestTimeout);
}

/** Names from the member list of the first member that answers (else host:port stays); `among`: the members to ask (default all). */
export async function nameMembers(
  members: MemberSpec[],
  client: (m: MemberSpec) => KvClient,
  debug: (line: string) => void,
  among: MemberSpec[] = members,
): Promise<void> {
  for (const m of among) {
    try {
      applyNames(members, await client(m).members());
      return;
    } catch (err) {
      debug(`member list from ${m.endpoint} failed: ${(err as Error).message}`);
    }
  }
}

/** Each member's name as the cluster's member list gives it (by client URL; a member it does not list keeps its name). */
export function applyNames(members: MemberSpec[], list: Array<{ name: string; clientUrls: string[] }>): void {
  for (const x of members) {
    const hit = list.find((l) => l.clientUrls.some((u) => u.replace(/\/+$/, '') === x.endpoint));
    if (hit?.name) x.name = hit.name;
  }
}

/** The member as etcdctl names an endpoint in its lines: host:port. */
export const hostPort = (m: MemberSpec) => new URL(m.endpoint).host;

/** Lines as etcdctl prints them, each ending in a line break (a last empty line too: an empty value); none: nothing. */
export function linesText(lines: readonly string[]): string {
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/**
 * A verb's answer in the shape -w asks: a table (columns), etcdctl's simple lines, or JSON. Without -w: the
 * table, else `plain` (a verb's own lines), else the simple lines.
 */
export function shaped(
  opts: Pick<OpsFlags, 'writeOut'>,
  r: {
    data: unknown;
    columns?: Array<string | Column>;
    simple: string[];
    plain?: string[];
    message?: string;
    exitCode?: number;
    /** etcdctl's own -w json text (the verbs that print it: member list, endpoint status); else -w json is --json's. */
    etcdctlJson?: string;
    /** etcdctl's own -w table (its boxed table); else -w table is opsctl's table. */
    etcdctlTable?: string;
  },
): CommandResult {
  const base = { data: r.data, exitCode: r.exitCode };
  if (opts.writeOut === 'simple') return { ...base, text: linesText(r.simple) };
  if (opts.writeOut === 'json') return { ...base, text: r.etcdctlJson ?? JSON.stringify(r.data, null, 2) };
  if (opts.writeOut === 'table' && r.etcdctlTable !== undefined) return { ...base, text: r.etcdctlTable };
  if (!r.columns) return { ...base, text: linesText(r.plain ?? r.simple), message: r.message };
  return { ...base, columns: r.columns.map((c) => (typeof c === 'string' ? { key: c } : c)), message: r.message };
}

/**
 * The exit code of a verb that acts on each member (endpoint health|status, defrag), from each member's
 * error: 0 when none failed; 4 when a member refused the credentials (a wrong password, or auth on and no
 * --user: every member answers the same), its fix said once on stderr; else 1 (a sign-in that timed out
 * says its fix once too: the per-member lines carry only the message).
 */
export function eachExit(ctx: Context, errors: unknown[]): 0 | 1 | 4 {
  const failed = errors.filter((e) => e !== undefined);
  if (!failed.length) return 0;
  const refused = failed.find((e): e is OpsError => e instanceof OpsError && e.exitCode === 4);
  const said = refused ?? failed.find((e): e is OpsError => e instanceof OpsError && e.code === 'kv_signin_timeout');
  if (said?.hint) ctx.io.warn(said.hint);
  return refused ? 4 : 1;
}

/**
 * A refusal by etcd itself (a gateway error) as the verb's error, with etcd's words; `fixes` gives the fix
 * of a refusal the verb knows (matched on etcd's message), else the error's own (a member's health for a 5xx).
 */
export function etcdSaid(err: unknown, what: string, fixes: Array<[RegExp, string]> = []): never {
  if (err instanceof GatewayError) {
    const fix = fixes.find(([re]) => re.test(err.serverMessage))?.[1];
    throw new OpsError(`${what}: etcd refused: ${err.serverMessage}`, 1, { code: 'kv_refused', hint: fix ?? err.hint });
  }
  throw err;
}

/** The flags of a per-member verb (flags.ts perMember): `--cluster` alone is etcdctl's, `--cluster FILE` a cluster file. */
export interface PerMemberFlags extends Omit<OpsFlags, 'cluster'> {
  cluster?: string | true;
  memberList?: boolean;
}

/**
 * The cluster a per-member verb reaches and the members it acts on: the cluster's (sandbox, file,
 * --endpoints), or with `--cluster` alone (or --member-list) every member the cluster's own list names,
 * as etcdctl's --cluster. `named: false`: a verb that shows no member's name asks no member list for them.
 */
export async function reachEach(ctx: Context, opts: PerMemberFlags, { named = true } = {}): Promise<{ r: Reached; members: MemberSpec[] }> {
  const everyListed = opts.cluster === true || Boolean(opts.memberList);
  const r = await reach(ctx, { ...opts, cluster: opts.cluster === true ? undefined : opts.cluster }, { named: named && !everyListed });
  if (!everyListed) return { r, members: r.members };
  const { listMembers } = await import('../../../kv/ops/members.js');
  const { members } = await r.any((c) => listMembers(c));
  return {
    r,
    members: members.filter((m) => m.clientUrls.length).map((m) => ({ name: m.name || BigInt(m.id).toString(16), endpoint: m.clientUrls[0]! })),
  };
}

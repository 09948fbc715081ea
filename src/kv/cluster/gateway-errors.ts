/** The errors of a member's JSON gateway, said with their fix: a server-side error, a refused redirect, a client certificate with a CN. */
import { redactUrl } from '../../core/redact.js';
import { NetworkError, OpsError } from '../../core/errors.js';
import { asObject, parseMemberList, textOf, type MemberListEntry } from './parse.js';

/**
 * A server-side gateway error (gRPC status in JSON), e.g. "request is too large". The member's health is
 * the fix only of a member that failed (5xx: unavailable, no leader, timed out); a refusal of the request
 * itself (4xx: not found, out of range, invalid) is said in etcd's words, the verb adding its own fix.
 */
export class GatewayError extends OpsError {
  constructor(
    readonly endpoint: string,
    readonly status: number,
    readonly serverMessage: string,
  ) {
    const tooLarge = /request is too large/i.test(serverMessage);
    super(`${endpoint}: ${tooLarge ? 'request is too large' : serverMessage} (HTTP ${status})`, 1, {
      code: tooLarge ? 'request_too_large' : 'kv_gateway',
      hint: tooLarge
        ? 'the value exceeds the server limit (--max-request-bytes, default 1.5 MiB): store a smaller value or raise the limit on every member'
        : status >= 500 || status < 400
          ? 'check the member with: opsctl kv health'
          : undefined,
    });
  }
}

/** A redirect the kv client will not follow. */
export class RedirectRefused extends OpsError {
  constructor(endpoint: string, status: number, location: string, why: string) {
    super(`${endpoint}: the member answered HTTP ${status} redirecting to ${redactUrl(location)}; not followed: ${why}`, 1, {
      code: 'kv_redirect_refused',
      hint: "give the member's own client URL in --endpoints (or the cluster file); opsctl sends etcd requests only to the members themselves",
    });
  }
}

/** The message of a gateway error body ({"error": …} or {"message": …}), else the text. */
export function gatewayMessage(text: string): string {
  let msg = text.trim().slice(0, 200);
  try {
    const e = asObject(JSON.parse(text));
    msg = textOf(e.message ?? e.error ?? e.Error) ?? msg;
  } catch {
    /* plain text */
  }
  return msg;
}

/**
 * etcd 3.4 and later (with --client-cert-auth) refuse every JSON-gateway request whose client
 * certificate has a Common Name: the gateway cannot pass the CN on as the user, so it will not
 * pretend to. Said with its fix; any other gateway error as it is.
 */
export const CN_REFUSED = /CommonName of client sending a request against gateway/i;

export function gatewayError(endpoint: string, status: number, msg: string): OpsError {
  if (CN_REFUSED.test(msg)) {
    return new OpsError(`${endpoint}: etcd refuses JSON-gateway requests from a client certificate with a Common Name (CN) while --client-cert-auth is on`, 1, {
      code: 'tls_cn_gateway',
      hint: 'give opsctl (--cert/--key) a client certificate from the same CA without a CN, and log in with --user NAME; etcdctl (gRPC) may keep a CN certificate',
    });
  }
  return new GatewayError(endpoint, status, msg);
}

/**
 * etcd's refusal of a request for want of a user or a permission (exit 4), with the fix: --user when none
 * was given. `msg` is etcd's own words (a watch the member cancels gives them as its reason); `prefix` the
 * member's gateway prefix (3.2's /v3alpha passes no token on).
 */
export function authRefusal(endpoint: string, msg: string, user: string | undefined, prefix: string | undefined): OpsError {
  return new OpsError(`${endpoint}: etcd refused the request: ${msg}`, 4, {
    code: 'auth_required',
    hint: !user
      ? 'auth is enabled on this cluster: pass --user NAME (the password from the prompt, OPSCTL_KV_PASSWORD or --password-file)'
      : prefix === '/v3alpha'
        ? "etcd 3.2's JSON gateway does not pass auth tokens on: use etcdctl for this, or run it once the member runs 3.3"
        : `user ${user} lacks the permission: grant its role access to this key (etcdctl role grant-permission)`,
  });
}

/**
 * A sign-in that timed out, said as such (not as an unhealthy member or a failed read): etcd checks the
 * password with bcrypt on every sign-in, slowly on a busy member. Other errors pass through unchanged.
 */
export function signInTimeout(err: unknown, endpoint: string, user: string, timeoutMs: number): unknown {
  if (!(err instanceof NetworkError) || !/no complete answer/.test(err.message)) return err;
  return new NetworkError(`${endpoint}: etcd did not answer the sign-in of user ${user} within ${timeoutMs} ms`, {
    code: 'kv_signin_timeout',
    hint: 'etcd checks the password (bcrypt) at every sign-in, slowly on a busy member: give it longer with --request-timeout, e.g. 10s',
    cause: err,
  });
}

/*
 * An endpoint that serves no v3 gateway: said as a peer URL when it is one. etcd's peer port (2380 by
 * default) answers /version like the client port, but no gateway and no /health; it answers /members
 * with every member's peer and client URLs (3.2 to 3.7 alike, checked against real etcd), so the error
 * names the member and the client URL to give instead.
 */
type Get = (path: string) => Promise<{ status: number; text: string }>;

const origin = (u: string) => {
  try {
    return new URL(u).origin;
  } catch {
    return u;
  }
};
const port = (u: string) => {
  try {
    const url = new URL(u);
    return url.port || (url.protocol === 'https:' ? '443' : '80');
  } catch {
    return '';
  }
};

/** The cluster's members as a peer port lists them (GET /members: a bare array), or undefined when this is no peer port. */
async function peerMembers(get: Get): Promise<MemberListEntry[] | undefined> {
  const r = await get('/members').catch(() => undefined);
  if (r?.status !== 200 || !r.text.trim().startsWith('[')) return undefined;
  const list = parseMemberList(`{"members":${r.text}}`);
  return list.length && list.every((m) => m.peerUrls.length) ? list : undefined;
}

/** Why `endpoint` serves no gateway: a peer URL (with the client URL to use, when the cluster says it), else no gateway at all. */
export async function noGateway(endpoint: string, prefixes: readonly string[], get: Get): Promise<OpsError> {
  const members = await peerMembers(get);
  if (!members) {
    return new OpsError(`${endpoint}: no v3 JSON gateway answered (${prefixes.join(', ')})`, 1, {
      hint: `etcd 3.2 or later serves the gateway on its client URL; check the endpoint${port(endpoint) === '2380' ? " (2380 is etcd's default peer port; clients use 2379)" : ''}`,
    });
  }
  // by its own URL, else by its port when one member alone has it (a name for the address, such as localhost)
  const samePort = members.filter((m) => m.peerUrls.some((u) => port(u) === port(endpoint)));
  const mine = members.find((m) => m.peerUrls.some((u) => origin(u) === origin(endpoint))) ?? (samePort.length === 1 ? samePort[0] : undefined);
  const all = members.flatMap((m) => m.clientUrls);
  const use = mine?.clientUrls[0];
  return new OpsError(
    `${endpoint} is the peer URL of ${mine ? `member ${mine.name}` : 'a member of the cluster'} (etcd's member-to-member port), not a client URL${use ? `: its client URL is ${use}` : ''}`,
    2,
    {
      code: 'kv_peer_url',
      field: '--endpoints',
      hint: use
        ? `give its client URL instead: --endpoints ${use}${all.length > 1 ? ` (every member's: --endpoints ${all.join(',')})` : ''}`
        : all.length
          ? `give the client URLs instead: --endpoints ${all.join(',')}`
          : "give the members' client URLs (etcd --advertise-client-urls; 2379 by default)",
    },
  );
}

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { etcdDbFigures } from './bbolt.js';
import { KvClient } from './client.js';
import type { KvSession } from './session.js';
import type { KvConnection } from './connection.js';
import { asObject, parseJsonSafe } from './parse.js';

type Exec = typeof import('execa').execa;

export interface SnapshotResult {
  file: string;
  bytes: number;
  /** The store revision the snapshot holds. */
  revision: string;
  via: 'etcdctl' | 'gateway';
}

export interface SnapshotOptions {
  endpoint: string;
  /** The cluster's connection: the gateway's pool, etcdctl's TLS flags and user. */
  session: KvSession;
  file: string;
  timeoutMs: number;
  /** Path of etcdctl to use, or undefined for the HTTP gateway. */
  etcdctl?: string;
  exec: Exec;
  /** The revision sampled before: the snapshot must hold at least this one. */
  minRevision?: string;
}

export class SnapshotError extends Error {}

/** etcdctl, if installed where we look (flag, PATH's usual places). */
export function findEtcdctl(explicit?: string): string | undefined {
  for (const p of [explicit, '/usr/bin/etcdctl', '/usr/local/bin/etcdctl']) if (p && existsSync(p)) return p;
  return undefined;
}

/**
 * etcdctl runs with a clean environment (no stray ETCDCTL_* settings), API 3, one endpoint. With
 * --user the credentials go in ETCDCTL_USER=name:password (etcdctl 3.3+ reads every flag from its
 * ETCDCTL_ variable; name:password works in 3.3 and 3.4): the environment of a process is readable
 * only by its user and root, its argv by everyone (ps).
 */
function etcdctlEnv(conn?: KvConnection): Record<string, string> {
  const env: Record<string, string> = { ETCDCTL_API: '3', PATH: '/usr/local/bin:/usr/bin:/bin' };
  const auth = conn?.auth;
  if (auth) env.ETCDCTL_USER = `${auth.user}:${auth.password}`;
  return env;
}

/** etcdctl's TLS flags for the cluster's settings (paths only). */
export function etcdctlTlsArgs(conn: KvConnection): string[] {
  const t = conn.tls;
  if (!t) return [];
  return [
    ...(t.cacert ? ['--cacert', t.cacert] : []),
    ...(t.cert ? ['--cert', t.cert] : []),
    ...(t.key ? ['--key', t.key] : []),
    ...(t.insecureSkipVerify ? ['--insecure-skip-tls-verify'] : []),
  ];
}

/**
 * Saves a snapshot from one member and verifies it: the trailing SHA-256 over the rest of the file
 * (etcd appends it to the db; the simulated member does the same), and the revision it holds is at
 * least the one sampled before. Writes to FILE.part and renames only once verified.
 */
export async function saveSnapshot(opts: SnapshotOptions): Promise<SnapshotResult> {
  await mkdir(dirname(opts.file), { recursive: true, mode: 0o700 });
  const part = `${opts.file}.part`;
  let via: SnapshotResult['via'];
  let data: Buffer;
  if (opts.etcdctl) {
    via = 'etcdctl';
    // Exactly one endpoint: etcdctl must not fail over to another member mid-snapshot.
    const r = await opts.exec(
      opts.etcdctl,
      [
        '--endpoints',
        opts.endpoint,
        ...etcdctlTlsArgs(opts.session.conn),
        '--dial-timeout',
        '5s',
        '--command-timeout',
        `${Math.ceil(opts.timeoutMs / 1000)}s`,
        'snapshot',
        'save',
        part,
      ],
      {
        env: etcdctlEnv(opts.session.conn),
        extendEnv: false,
        timeout: opts.timeoutMs + 5000,
        reject: false,
        stdin: 'ignore',
      },
    );
    if (r.exitCode !== 0) throw new SnapshotError(`etcdctl snapshot save failed (exit ${r.exitCode}): ${String(r.stderr).trim().split('\n').pop()}`);
    data = await readFile(part);
  } else {
    via = 'gateway';
    data = await new KvClient(opts.endpoint, { timeoutMs: opts.timeoutMs, session: opts.session }).snapshot(opts.timeoutMs);
    await writeFile(part, data);
  }
  try {
    verifyTrailer(data);
  } catch (err) {
    throw new SnapshotError(`snapshot from ${opts.endpoint} is corrupt: ${(err as Error).message} (kept as ${part})`);
  }
  const revision = snapshotRevision(data);
  // An empty keyspace: etcd's header revision starts at 1, `snapshot status` counts keys and says 0.
  const floor = opts.minRevision === undefined ? undefined : BigInt(opts.minRevision) <= 1n ? 0n : BigInt(opts.minRevision);
  if (opts.minRevision !== undefined && BigInt(revision) < floor!) {
    throw new SnapshotError(`snapshot from ${opts.endpoint} holds revision ${revision}, older than the revision ${opts.minRevision} sampled before it`);
  }
  await rename(part, opts.file);
  return { file: opts.file, bytes: data.length, revision, via };
}

/** The last 32 bytes are the SHA-256 of everything before them. */
export function verifyTrailer(data: Buffer): void {
  if (data.length <= 32) throw new Error(`only ${data.length} bytes`);
  const body = data.subarray(0, data.length - 32);
  const want = data.subarray(data.length - 32);
  const got = createHash('sha256').update(body).digest();
  if (!got.equals(want))
    throw new Error(`SHA-256 trailer mismatch (file says ${want.toString('hex').slice(0, 12)}…, content hashes to ${got.toString('hex').slice(0, 12)}…)`);
}

function snapshotRevision(data: Buffer): string {
  // The simulated member's file: JSON state, padding, trailer.
  if (data.subarray(0, 14).toString() === '{"kvsnapshot":') {
    const text = data
      .subarray(0, data.length - 32)
      .toString()
      .trimEnd();
    return String(asObject(parseJsonSafe(text)).revision);
  }
  // etcd's: the bbolt database read directly (the revision etcdctl snapshot status would print).
  try {
    return etcdDbFigures(data.subarray(0, data.length - 32)).revision;
  } catch (err) {
    throw new SnapshotError(`the snapshot is not an etcd database: ${(err as Error).message}`);
  }
}

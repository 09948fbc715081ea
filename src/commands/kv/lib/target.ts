/**
 * Where a kv verb's requests go, found without loading any member driver: `--cluster FILE`, `--endpoints`,
 * `ETCDCTL_ENDPOINTS`, or the sandbox `kv sandbox up` remembered, in that order (a flag over a variable over
 * the default, as etcdctl: the flag wins where etcdctl 3.4+ refuses the pair). The etcdctl-like verbs reach
 * the cluster through this alone (lib/ops.ts); the verbs that stop and start members add the driver on top
 * (lib/shared.ts).
 */
import { resolve } from 'node:path';
import type { Context } from '../../../context.js';
import { UsageError } from '../../../core/errors.js';
import type { MemberSpec, SandboxSpec } from '../../../kv/cluster/cluster-file.js';
import { normalizeEndpoint } from './endpoint.js';
import type { FileConnection } from './connection.js';
import type { KvConnection } from '../../../kv/cluster/connection.js';
import { KvSession } from '../../../kv/cluster/session.js';

/** The flags that name the cluster. */
export interface TargetFlags {
  endpoints?: string;
  cluster?: string;
}

/** A cluster file as lib/cluster-file.ts parses it. */
export type ParsedClusterFile = Awaited<ReturnType<typeof import('./cluster-file.js').parseClusterFile>>;

export type FoundCluster =
  | { source: 'file'; path: string; parsed: ParsedClusterFile }
  /** `text`: the list as given (the flag's or the variable's), for the commands opsctl prints back. */
  | { source: 'endpoints'; from: '--endpoints' | 'ETCDCTL_ENDPOINTS'; text: string; endpoints: string[] }
  | { source: 'sandbox'; spec: SandboxSpec };

export async function findCluster(ctx: Context, f: TargetFlags): Promise<FoundCluster> {
  if (f.cluster && f.endpoints) throw new UsageError('--cluster and --endpoints: give one of them', { hint: 'the cluster file lists the endpoints' });
  if (f.cluster) {
    const [{ readLocalFile }, { fileFix, fileProblem }, { parseClusterFile }] = await Promise.all([
      import('../../../core/local-file.js'),
      import('../../../core/file-errors.js'),
      import('./cluster-file.js'),
    ]);
    const path = resolve(ctx.cwd, f.cluster);
    const text = await readLocalFile(path, { what: '--cluster:', exitCode: 2, maxBytes: 1024 * 1024 }).catch((err) => {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--cluster: ${path} ${fileProblem(err)}`, {
        field: '--cluster',
        hint: fileFix(err, path) ?? 'give the path of a cluster file (see docs/kv-upgrade.md)',
      });
    });
    return { source: 'file', path, parsed: await parseClusterFile(text, path) };
  }
  const fromEnv = ctx.env.ETCDCTL_ENDPOINTS;
  if (f.endpoints === undefined && fromEnv !== undefined && fromEnv.trim() === '')
    throw new UsageError('ETCDCTL_ENDPOINTS is set but empty', { field: 'ETCDCTL_ENDPOINTS', hint: 'unset it, or list the client URLs: host:2379,…' });
  const text = f.endpoints ?? fromEnv;
  if (text !== undefined) {
    const from = f.endpoints !== undefined ? '--endpoints' : 'ETCDCTL_ENDPOINTS';
    if (from === '--endpoints' && fromEnv) ctx.debug(`--endpoints given: ETCDCTL_ENDPOINTS (${fromEnv}) is not used`);
    const endpoints = text
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)
      .map((e) => normalizeEndpoint(e, from));
    if (!endpoints.length)
      throw new UsageError(`${from}: no endpoint in "${text}"`, { field: from, hint: 'list the client URLs, comma-separated: host:2379,…' });
    return { source: 'endpoints', from, text, endpoints };
  }
  const { loadSandbox } = await import('../../../kv/sandbox/file.js');
  const spec = loadSandbox(ctx.paths.data);
  if (!spec) {
    throw new UsageError('no kv cluster given', {
      code: 'no_cluster',
      hint: 'pass --endpoints http://HOST:2379,… (or set ETCDCTL_ENDPOINTS) or --cluster FILE, or start a local one: opsctl kv sandbox up',
    });
  }
  return { source: 'sandbox', spec };
}

/** The members of what was found (named host:port when only endpoints were given). */
export function membersOf(found: FoundCluster): MemberSpec[] {
  if (found.source === 'file') return found.parsed.members;
  if (found.source === 'sandbox') return found.spec.members;
  return found.endpoints.map((e) => ({ name: new URL(e).host, endpoint: e }));
}

/** The `tls:` and `auth:` blocks of a cluster file, with the file they are relative to. */
export function fileConnection(found: FoundCluster): { conn: FileConnection; path: string } | undefined {
  return found.source === 'file' ? { conn: found.parsed.conn, path: found.path } : undefined;
}

/** The command's session with the cluster, closed when the command ends. */
export function openSession(ctx: Context, conn: KvConnection = {}): KvSession {
  const session = new KvSession(conn);
  ctx.onCleanup(() => session.close());
  return session;
}

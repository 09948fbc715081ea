import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { asObject, parseJsonSafe } from '../cluster/parse.js';
import type { EtcdDbFigures } from './etcd-db.js';

type Exec = typeof import('execa').execa;

/** etcd's own reader of snapshot files: etcdutl (3.5+), else etcdctl's `snapshot status` (3.2–3.5). */
export interface SnapshotTool {
  name: 'etcdutl' | 'etcdctl';
  path: string;
  exec: Exec;
}

/** etcdutl beside the etcdctl found (a 3.5+ release ships both), else that etcdctl; undefined without one. */
export function snapshotTool(etcdctl: string | undefined, exec: Exec): SnapshotTool | undefined {
  if (!etcdctl) return undefined;
  const utl = join(dirname(etcdctl), 'etcdutl');
  return existsSync(utl) ? { name: 'etcdutl', path: utl, exec } : { name: 'etcdctl', path: etcdctl, exec };
}

/**
 * Runs `<tool> snapshot status FILE -w json` (clean environment, read-only) and compares its hash,
 * revision, total keys and total size with ours. Returns what differs, or undefined when all agree.
 */
export async function crossCheckSnapshot(file: string, tool: SnapshotTool, ours: EtcdDbFigures, timeoutMs = 120_000): Promise<string | undefined> {
  const r = await tool.exec(tool.path, ['snapshot', 'status', file, '-w', 'json'], {
    env: { ETCDCTL_API: '3', PATH: '/usr/local/bin:/usr/bin:/bin' },
    extendEnv: false,
    timeout: timeoutMs,
    reject: false,
    stdin: 'ignore',
  });
  if (r.exitCode !== 0) {
    const why = String(r.stderr ?? '')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l && !/^(goroutine|runtime\.|\s)/.test(l));
    return `${tool.name} snapshot status fails on it (exit ${r.exitCode ?? r.signal}${why ? `: ${why.slice(0, 200)}` : ''})`;
  }
  let theirs: Record<string, unknown>;
  try {
    theirs = asObject(parseJsonSafe(String(r.stdout).trim().split('\n').pop() ?? ''));
  } catch {
    return `${tool.name} snapshot status printed no JSON`;
  }
  const diffs: string[] = [];
  const cmp = (what: string, a: string, b: unknown) => {
    if (String(b) !== a) diffs.push(`${what} ${a} here, ${String(b)} by ${tool.name}`);
  };
  cmp('hash', String(ours.hash), theirs.hash);
  cmp('revision', ours.revision, theirs.revision);
  cmp('total keys', String(ours.totalKey), theirs.totalKey);
  cmp('total size', String(ours.totalSize), theirs.totalSize);
  return diffs.length ? `${tool.name} disagrees: ${diffs.join(', ')}` : undefined;
}

import { existsSync } from 'node:fs';
import type { KvConnection } from './connection.js';

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
export function etcdctlEnv(conn?: KvConnection): Record<string, string> {
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

import { execFileSync } from 'node:child_process';
import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import { installed, requireProgram } from './e2e.js';

/** Network namespaces need root and iproute2 (CI runs as root). */
export function canNetns(what = 'kv network-namespace e2e'): boolean {
  if (!installed('/sbin/ip') && !requireProgram('iproute2 (ip)', '/usr/sbin/ip')) return false;
  if (process.getuid?.() === 0) return true;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`the ${what} needs root (OPSCTL_REQUIRE_E2E=1)`);
  process.stderr.write(`\n*** SKIPPING ${what}: not root ***\n\n`);
  return false;
}

/**
 * Hosts for a test: one network namespace per host with its own address (10.N.M.1…, a private range,
 * only inside namespaces this helper makes), joined by a bridge in a hub namespace (10.N.M.254) where
 * the test runs opsctl. `cut(i)` / `restore(i)` take a host's link down and up. `destroy()` deletes
 * every namespace it made (with them the veth pairs and the bridge), also after a failure.
 */
export interface NetnsHosts {
  /** The hub namespace's name (opsctl runs there: `ip netns exec HUB …`). */
  hub: string;
  /** Host i's namespace name. */
  ns(i: number): string;
  /** Host i's address. */
  addr(i: number): string;
  addrs: string[];
  cut(i: number): void;
  restore(i: number): void;
  destroy(): void;
}

/** `prefix` names the namespaces (`PREFIX<id>-hub`, `PREFIX<id>-etcd1`…) and, short, the hub-side veths (<= 15 characters). */
export function netnsHosts(count: number, prefix: string, secondOctet = 213): NetnsHosts {
  const id = randomBytes(2).toString('hex');
  const net = `10.${secondOctet}.${parseInt(id, 16) % 250}`;
  const hub = `${prefix}${id}-hub`;
  const ns = (i: number) => `${prefix}${id}-etcd${i + 1}`;
  const veth = (i: number) => `${prefix.slice(0, 8)}${id}h${i + 1}`.slice(0, 15);
  const made: string[] = [];
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' }).toString();
  const destroy = () => {
    for (const n of made.reverse()) {
      try {
        ip('netns', 'del', n);
      } catch {
        // already gone
      }
    }
    made.length = 0;
  };
  try {
    ip('netns', 'add', hub);
    made.push(hub);
    ip('-n', hub, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', hub, 'addr', 'add', `${net}.254/24`, 'dev', 'br0');
    ip('-n', hub, 'link', 'set', 'br0', 'up');
    ip('-n', hub, 'link', 'set', 'lo', 'up');
    for (let i = 0; i < count; i++) {
      ip('netns', 'add', ns(i));
      made.push(ns(i));
      ip('-n', hub, 'link', 'add', veth(i), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns(i));
      ip('-n', hub, 'link', 'set', veth(i), 'master', 'br0');
      ip('-n', hub, 'link', 'set', veth(i), 'up');
      ip('-n', ns(i), 'addr', 'add', `${net}.${i + 1}/24`, 'dev', 'eth0');
      ip('-n', ns(i), 'link', 'set', 'eth0', 'up');
      ip('-n', ns(i), 'link', 'set', 'lo', 'up');
    }
  } catch (err) {
    destroy();
    throw err;
  }
  const addr = (i: number) => `${net}.${i + 1}`;
  return {
    hub,
    ns,
    addr,
    addrs: Array.from({ length: count }, (_, i) => addr(i)),
    cut: (i) => void ip('-n', hub, 'link', 'set', veth(i), 'down'),
    restore: (i) => void ip('-n', hub, 'link', 'set', veth(i), 'up'),
    destroy,
  };
}

/**
 * A program run in the hub namespace, where a test runs opsctl: exit code and output, never a throw; opsctl's config
 * dir (`configDir`, read at each call: a test may switch it) and plain output, ETCDCTL_API=3 for etcdctl.
 */
export function hubRunner(hub: () => string, configDir: () => string, defaultTimeout = 240_000) {
  return (file: string, args: string[], timeout = defaultTimeout) =>
    execa('ip', ['netns', 'exec', hub(), file, ...args], {
      reject: false,
      env: { OPSCTL_CONFIG_DIR: configDir(), NO_COLOR: '1', CI: '1', ETCDCTL_API: '3' },
      extendEnv: true,
      timeout,
    });
}

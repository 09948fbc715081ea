import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { readJournal } from './journal.js';

/** A member of the sandbox's own record (data/kv/sandbox/sandbox.json). */
export interface SandboxMember {
  name: string;
  endpoint: string;
  peerUrl: string;
  dataDir: string;
  pidFile: string;
  logFile: string;
}

/** A temp OPSCTL_CONFIG_DIR with a kv sandbox helper; `down()` stops only the members it started. */
export function kvSandbox(o: { configDir?: string } = {}) {
  const own = o.configDir ? undefined : tempConfigDir('opsctl-kv-');
  const dir = o.configDir ?? own!.dir;
  const env = { OPSCTL_CONFIG_DIR: dir };
  const kv = (...argv: string[]) => runCli(['kv', ...argv], { env });
  const sandboxFile = join(dir, 'data', 'kv', 'sandbox', 'sandbox.json');
  const spec = () => JSON.parse(readFileSync(sandboxFile, 'utf8')) as { members: SandboxMember[] };
  return {
    dir,
    env,
    kv,
    spec,
    /** The sandbox's record: the cluster file `--cluster` takes for it. */
    sandboxFile,
    /** The journal of the sandbox cluster (there is one cluster per sandbox). */
    journal: () => readJournal(dir),
    fault(f: object) {
      for (const m of spec().members) writeFileSync(join(m.dataDir, 'CONDITIONS.json'), JSON.stringify(f));
    },
    logs(): string {
      return spec()
        .members.map((m) => readFileSync(m.logFile, 'utf8'))
        .join('');
    },
    async down() {
      if (existsSync(sandboxFile)) await kv('sandbox', 'down');
      own?.cleanup();
    },
  };
}

export type KvSandbox = ReturnType<typeof kvSandbox>;

/** A 3-member simulated sandbox of `version` (heartbeat 50 ms), up; `extra`: more `kv sandbox up` flags. */
export async function upSandbox(version: string, ...extra: string[]): Promise<KvSandbox> {
  return sandboxUp({ version, size: 3, extra });
}

/**
 * A sandbox of `size` members, up, in its own config dir or `configDir`: simulated members of `version` (heartbeat
 * 50 ms; `extra` may name another), or with `etcdBin` real etcd from that release directory (`--etcd-bin`, the
 * sandbox's own timings).
 */
export async function sandboxUp(o: { version: string; size: number; extra?: string[]; configDir?: string } | SandboxOfEtcd): Promise<KvSandbox> {
  const sb = kvSandbox(o.configDir ? { configDir: o.configDir } : {});
  const runs = 'etcdBin' in o ? ['--etcd-bin', o.etcdBin] : ['--kv-version', o.version, '--heartbeat', '50ms'];
  const up = await sb.kv('sandbox', 'up', '--members', String(o.size), ...runs, ...(o.extra ?? []));
  if (up.code !== 0) await sb.down();
  if (up.code !== 0) throw new Error(`kv sandbox up ${runs.join(' ')}: exit ${up.code}: ${up.stderr}`);
  return sb;
}

/** A sandbox whose members run real etcd from `etcdBin` (a release directory), not the simulator. */
export interface SandboxOfEtcd {
  etcdBin: string;
  size: number;
  extra?: string[];
  configDir?: string;
}

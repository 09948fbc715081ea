import { execa, type Options } from 'execa';
import { BIN } from '../helpers/bin.js';
import { runCli } from '../helpers/cli.js';

/** What a test cluster's members are: the simulator (the sandbox), real etcd processes, or podman containers. */
export type MemberKind = 'simulated' | 'real' | 'container';

/** What every backend's member has; a backend's own member type adds its own (a real member's folder, a container's volume). */
export interface TestMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  host: string;
  /** Where its data is: on this machine (simulated, real) or in its container (container). */
  dataDir: string;
}

/** The environment every opsctl run of a cluster gets: its config dir, no colour, CI (no prompt). */
export type ClusterEnv = Record<string, string> & { OPSCTL_CONFIG_DIR: string };

/** How `opsctlWith` runs the built binary: a deadline, more environment, stdin and so on (execa's options). */
export type RunOptions = Pick<Options, 'timeout' | 'input' | 'cancelSignal' | 'killSignal' | 'cwd'> & { env?: Record<string, string> };

/**
 * The cluster a test brought up with startCluster, whatever its members are. `opsctl` runs the built binary
 * (never rejects: look at exitCode) bound to the cluster's config dir; `cli` runs opsctl in process (the
 * integration tier's way), bound the same. `destroy()` stops what the framework started and removes its
 * folders (a config dir given by the test stays).
 */
export interface TestCluster<M extends TestMember = TestMember> {
  kind: MemberKind;
  members: M[];
  endpoints: string[];
  configDir: string;
  env: ClusterEnv;
  /** The cluster file for its driver (command, container), written at bring-up; a sandbox's own record for simulated members. */
  file: string;
  opsctl(...args: string[]): ReturnType<typeof runOpsctl>;
  opsctlWith(o: RunOptions, ...args: string[]): ReturnType<typeof runOpsctl>;
  cli(...args: string[]): ReturnType<typeof runCli>;
  /** The member's process id (real members: their PID file's, whether it still runs or not; `alive` says). */
  pid(m: M | string): number | undefined;
  /** Whether the member's process runs (real: the PID file's process is this member's etcd, not a zombie). */
  alive(m: M | string): boolean;
  /** Signals the member's process (SIGKILL by default); only a process the framework started. */
  kill(m: M | string, signal?: NodeJS.Signals): void;
  destroy(): Promise<void>;
}

/** The built binary with the cluster's environment (and `o`'s), after `via` (a command it runs under: `ip netns exec HUB`); never rejects. */
export function runOpsctl(env: ClusterEnv, o: RunOptions, args: string[], via: string[] = []) {
  const argv = [...via, process.execPath, BIN, ...args];
  return execa(argv[0]!, argv.slice(1), { timeout: 300_000, ...o, reject: false, env: { ...env, ...o.env }, extendEnv: true });
}

/**
 * The parts every backend shares: the runners bound to the config dir (the built binary's under `via`, where the
 * members are reached from: a network namespace's hub), and a member found by name.
 */
export function boundRunners(env: ClusterEnv, timeout: number | undefined, via: string[] = []) {
  const base: RunOptions = timeout === undefined ? {} : { timeout };
  return {
    opsctl: (...args: string[]) => runOpsctl(env, base, args, via),
    opsctlWith: (o: RunOptions, ...args: string[]) => runOpsctl(env, { ...base, ...o }, args, via),
    cli: (...args: string[]) => runCli(args, { env }),
  };
}

/** The member `m` names (itself, or its name) among `members`; throws on an unknown name. */
export function memberOf<M extends TestMember>(members: M[], m: M | string): M {
  if (typeof m !== 'string') return m;
  const found = members.find((x) => x.name === m);
  if (!found) throw new Error(`no member ${m} (the cluster has ${members.map((x) => x.name).join(', ')})`);
  return found;
}

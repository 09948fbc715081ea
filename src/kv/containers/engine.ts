/**
 * The container engine's command line, as an operator types it: `podman …` or `docker …`, on this machine
 * or behind a prefix (`ssh {host} sudo`). Every call is an argv (no shell here; the prefix's words are
 * the command driver's template grammar, its values checked as there). Both engines take the same verbs
 * for what opsctl asks: inspect, create, start, stop, rename, rm, run, logs, pause, unpause, ps.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import { valueProblem } from '../cluster/cluster-file.js';
import { OpsError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { compileTemplate, displayArgv, renderArgv, type Template } from '../templates/argv.js';
import { parseImageDefaults, parseInspect, type ContainerSettings, type ImageDefaults } from './settings.js';

type Exec = typeof import('execa').execa;

export interface EngineResult {
  stdout: string;
  stderr: string;
  exitCode?: number;
  argv: string[];
  timedOut: boolean;
}

/** Words an engine prints when a container or image does not exist (podman's and docker's). */
const NO_SUCH = /no such (container|object|image)|no container with name or ID|image not known|not found/i;

/**
 * The container engine failed or refused (a container or image missing, the engine not running, its own words):
 * an error of the environment, said with the engine's words and where to look, never an "unexpected error".
 */
export class EngineError extends OpsError {
  constructor(message: string) {
    super(message, ExitCode.failure, {
      code: 'engine',
      hint: "the container engine's words above say what failed: check the engine and the member's container (podman ps -a / docker ps -a), then run the same command",
    });
  }
}

export class Engine {
  private readonly prefix?: Template;

  constructor(
    /** The engine's program: podman, docker, or a path. */
    readonly program: string,
    onHost: string | undefined,
    private readonly exec: Exec,
    private readonly env: NodeJS.ProcessEnv,
    private readonly timeoutMs = 120_000,
  ) {
    if (onHost) this.prefix = compileTemplate(onHost);
  }

  /** podman or docker, by the program's name (the differences: docs/kv-upgrade.md, "Containers"). */
  get kind(): 'podman' | 'docker' {
    return /docker[^/]*$/.test(this.program) ? 'docker' : 'podman';
  }

  /** `stop` with a grace of `seconds` before SIGKILL: podman's `--time`, docker's `--timeout` (its `--time` is deprecated). */
  stopArgs(name: string, seconds: number): string[] {
    return ['stop', this.kind === 'docker' ? '--timeout' : '--time', String(seconds), name];
  }

  /**
   * Why the engine's containers may not be on this machine (their host paths are not this machine's then), or
   * undefined: no host prefix (driver.onHost), and no variable of the CLI's naming an engine elsewhere (docker's
   * DOCKER_HOST, podman's CONTAINER_HOST: only a unix socket or a loopback address is here) or one whose machine
   * cannot be told (DOCKER_CONTEXT, CONTAINER_CONNECTION, podman-remote).
   */
  elsewhere(): string | undefined {
    if (this.prefix) return "it runs on each member's host (driver.onHost)";
    if (/podman-remote[^/]*$/.test(this.program)) return `${this.program} talks to a podman service that may be on another machine`;
    const [hostVar, named] = this.kind === 'docker' ? ['DOCKER_HOST', 'DOCKER_CONTEXT'] : ['CONTAINER_HOST', 'CONTAINER_CONNECTION'];
    const url = this.env[hostVar];
    if (url && !onThisMachine(url)) return `${hostVar}=${url} names an engine elsewhere`;
    const ctx = this.env[named];
    if (ctx && !(named === 'DOCKER_CONTEXT' && ctx === 'default')) return `${named}=${ctx}: which machine its engine is on is not told here`;
    return undefined;
  }

  /**
   * Why a container this engine starts may not join the namespaces of the process that runs its CLI (the
   * rehearsal's clone needs that: its containers on the clone's network and data), or undefined: podman here,
   * with no service between (no daemon: conmon and the container are the CLI's children).
   */
  serviceBetween(): string | undefined {
    if (this.kind === 'docker') return `${this.program}'s daemon starts containers in its own namespaces`;
    const elsewhere = this.elsewhere();
    if (elsewhere) return elsewhere;
    for (const v of ['CONTAINER_HOST', 'CONTAINER_CONNECTION'])
      if (this.env[v]) return `${v} names a podman service, which starts containers in its own namespaces`;
    return undefined;
  }

  /** The words that run a command on the member's host (the prefix), empty on this machine. */
  hostWords(m: MemberSpec): string[] {
    if (!this.prefix) return [];
    const host = m.host ?? new URL(m.endpoint).hostname.replace(/^\[(.*)\]$/, '$1');
    const vars: Record<string, string> = { host, name: m.name, endpoint: m.endpoint };
    return renderArgv(this.prefix, (k) => {
      const v = vars[k];
      if (v === undefined) throw new EngineError(`driver.onHost: no value for {${k}} (it may use {host}, {name}, {endpoint})`);
      const p = valueProblem(k, v);
      if (p) throw new EngineError(`member ${JSON.stringify(m.name)}: {${k}} ${JSON.stringify(v)}: ${p}`);
      return v;
    });
  }

  /** A program on the member's host (the prefix, then the words); `input`: its standard input, a text or a file of this machine. */
  async host(m: MemberSpec, words: string[], timeoutMs = this.timeoutMs, input?: string | { file: string }): Promise<EngineResult> {
    const argv = [...this.hostWords(m), ...words];
    const [file, ...args] = argv;
    const io = input === undefined ? { stdin: 'ignore' as const } : typeof input === 'string' ? { input } : { inputFile: input.file };
    const r = await this.exec(file!, args, { reject: false, timeout: timeoutMs, ...io, env: this.env, extendEnv: false });
    return { stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode, argv, timedOut: Boolean(r.timedOut) };
  }

  /** The engine with `args` on the member's host. */
  run(m: MemberSpec, args: string[], timeoutMs = this.timeoutMs): Promise<EngineResult> {
    return this.host(m, [this.program, ...args], timeoutMs);
  }

  /** The engine, failing with its own words unless it exits 0. */
  async must(m: MemberSpec, args: string[], timeoutMs = this.timeoutMs): Promise<EngineResult> {
    const r = await this.run(m, args, timeoutMs);
    if (r.exitCode !== 0) throw new EngineError(failure(r, timeoutMs));
    return r;
  }

  /** A container's settings, or undefined when the engine has none of that name. */
  async inspect(m: MemberSpec, container: string): Promise<ContainerSettings | undefined> {
    const r = await this.run(m, ['container', 'inspect', container]);
    if (r.exitCode !== 0) {
      if (NO_SUCH.test(r.stderr)) return undefined;
      throw new EngineError(failure(r, this.timeoutMs));
    }
    const list = JSON.parse(r.stdout) as unknown[];
    return list[0] === undefined ? undefined : parseInspect(list[0]);
  }

  /** An image's defaults, or undefined when the engine does not have it. */
  async image(m: MemberSpec, image: string): Promise<(ImageDefaults & { id: string }) | undefined> {
    const r = await this.run(m, ['image', 'inspect', image]);
    if (r.exitCode !== 0) {
      if (NO_SUCH.test(r.stderr)) return undefined;
      throw new EngineError(failure(r, this.timeoutMs));
    }
    const raw = (JSON.parse(r.stdout) as unknown[])[0] as { Id?: string } | undefined;
    return raw ? { ...parseImageDefaults(raw), id: String(raw.Id ?? '').replace(/^sha256:/, '') } : undefined;
  }

  /** The names of every container (running or not) whose name begins with `prefix`, with their creation times. */
  async containersNamed(m: MemberSpec, prefix: string): Promise<Array<{ name: string; created: string }>> {
    const r = await this.must(m, ['ps', '--all', '--format', '{{.Names}}\t{{.CreatedAt}}']);
    return r.stdout
      .split('\n')
      .map((l) => l.split('\t'))
      .filter(([n]) => n?.startsWith(prefix))
      .map(([name, created]) => ({ name: name!, created: created ?? '' }));
  }
}

/** Whether an engine's address (DOCKER_HOST, CONTAINER_HOST) is on this machine: a unix socket, or TCP to a loopback address. */
export function onThisMachine(url: string): boolean {
  if (/^(unix|npipe):\/\//i.test(url)) return true;
  const m = /^(?:tcp|http|https):\/\/(\[[^\]]+\]|[^:/]+)/i.exec(url);
  const host = m?.[1]?.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || Boolean(host && /^127\./.test(host));
}

/** What a failed engine call said: its command line, exit and last words. */
export function failure(r: EngineResult, timeoutMs: number): string {
  const why = r.timedOut ? `timed out after ${timeoutMs} ms` : r.exitCode === undefined ? 'did not run' : `exit ${r.exitCode}`;
  const last = r.stderr.trim().split('\n').pop();
  return `\`${displayArgv(r.argv)}\` failed (${why})${last ? `: ${last}` : ''}`;
}

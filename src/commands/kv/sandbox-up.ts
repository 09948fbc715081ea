import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError, UsageError } from '../../core/errors.js';
import { PORT_CLASH_ATTEMPTS } from '../../core/retry.js';
import { KvClient } from '../../kv/cluster/client.js';
import { minor } from '../../kv/cluster/parse.js';
import type { MemberSpec, SandboxSpec } from '../../kv/cluster/cluster-file.js';
import { type ConfigSetting, createSandbox, liveMembers, loadSandbox, localDriver, removeSandbox, SANDBOX_CONFIG_KEYS } from '../../kv/sandbox/sandbox.js';
import { WaitFatal, waitFor } from '../../kv/cluster/wait.js';
import { duration, openSession } from './lib/shared.js';
import { SIMULATED_MINORS } from '../../kv/sandbox/members.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './sandbox-up.spec.js';
import { parseYamlDocument, yamlLib, YamlTextError } from '../../core/yaml.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `--config [MEMBER:]KEY=VALUE`, checked before anything starts: KEY an etcd config key the sandbox
 * does not manage itself, MEMBER one of kv1..kvN, VALUE one YAML scalar (written as given).
 */
export async function parseConfigSettings(raw: string[], members: number): Promise<ConfigSetting[]> {
  const { isMap, isScalar } = await yamlLib();
  const settings: ConfigSetting[] = [];
  for (const item of raw) {
    const [, member, key, value] = /^(?:(kv\d+):)?([a-z][a-z0-9-]*)=(.*)$/s.exec(item) ?? [];
    if (key === undefined || value === undefined)
      throw new UsageError(`--config: "${item}" is not [MEMBER:]KEY=VALUE`, {
        field: '--config',
        hint: 'e.g. --config auto-compaction-retention=1 or --config kv2:auto-compaction-retention=\'"24h"\'',
      });
    if (member && !(Number(member.slice(2)) >= 1 && Number(member.slice(2)) <= members)) {
      throw new UsageError(`--config: no member ${member} in a ${members}-member sandbox`, { field: '--config', hint: `members are kv1..kv${members}` });
    }
    if (SANDBOX_CONFIG_KEYS.has(key)) {
      throw new UsageError(`--config: ${key} is set by the sandbox itself`, {
        field: '--config',
        hint: `give a setting other than ${[...SANDBOX_CONFIG_KEYS].join(', ')} (--heartbeat sets the heartbeat and election timeout)`,
      });
    }
    const doc = await parseYamlDocument(`${key}: ${value}\n`).catch((err: unknown) => {
      if (err instanceof YamlTextError) return undefined;
      throw err;
    });
    const pair = doc && isMap(doc.contents) && doc.contents.items.length === 1 ? doc.contents.items[0] : undefined;
    if (value.trim() === '' || !pair || !isScalar(pair.value) || /[\n\r]/.test(value)) {
      throw new UsageError(`--config: the value of ${key} ("${value}") is not one YAML value`, {
        field: '--config',
        hint: `write it as in the config file: ${key}=24 (a number) or ${key}='"24h"' (a string)`,
      });
    }
    settings.push({ member, key, value: value.trim() });
  }
  return settings;
}

/** `kv sandbox up`: a local cluster on loopback (simulated members, or real etcd from --etcd-bin). */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const n = Number(opts.members);
  if (!Number.isInteger(n) || n < 1 || n > 7) throw new UsageError(`--members: "${opts.members}" must be a whole number from 1 to 7`, { field: '--members' });
  if (opts.version && opts.etcdBin) throw new UsageError('--version and --etcd-bin: give one of them', { hint: 'real binaries report their own version' });
  const config = await parseConfigSettings(opts.config ?? [], n);
  const exec = await ctx.exec();
  let version = opts.version ?? '3.2';
  let etcdBin: string | undefined;
  if (opts.etcdBin) {
    etcdBin = resolve(ctx.cwd, opts.etcdBin);
    if (!existsSync(join(etcdBin, 'etcd')))
      throw new UsageError(`--etcd-bin: ${etcdBin}/etcd does not exist`, {
        field: '--etcd-bin',
        hint: 'give the directory holding the etcd binary, e.g. /usr/bin',
      });
    const r = await exec(join(etcdBin, 'etcd'), ['--version'], { reject: false, timeout: 10_000 });
    version = minor(/Version:\s*(\S+)/.exec(String(r.stdout))?.[1]) ?? 'unknown';
  } else if (!SIMULATED_MINORS.includes(minor(version) ?? '') || !/^\d+\.\d+(\.\d+)?$/.test(version)) {
    throw new UsageError(`--version: simulated members run ${SIMULATED_MINORS.join(', ')} (or a patch release of one, e.g. 3.5.21), not "${version}"`, {
      field: '--version',
      hint: 'for other versions run real binaries with --etcd-bin DIR',
    });
  }
  const existing = loadSandbox(ctx.paths.data);
  if (existing) {
    if (liveMembers(existing).length > 0) {
      throw new OpsError('a kv sandbox is already running', 1, {
        code: 'sandbox_exists',
        hint: 'see it with: opsctl kv sandbox status   (or remove it: opsctl kv sandbox down)',
      });
    }
    await removeSandbox(ctx.paths.data);
  }
  const heartbeatMs = duration(opts.heartbeat, '--heartbeat', etcdBin ? 50 : 100);
  const wanted = opts.ports === undefined ? undefined : portList(opts.ports, n);
  const timeoutMs = duration(opts.timeout, '--timeout', 60_000);
  const session = openSession(ctx);
  const p = ctx.io.progress(`starting ${n} ${etcdBin ? `etcd ${version}` : `simulated kv ${version}`} members`);
  let spec: SandboxSpec;
  // A port picked free can be taken before its member binds it (another sandbox or program starting
  // at the same moment): the member then dies on "address already in use". Nothing is in the new
  // cluster yet, so it is laid out again on fresh ports, a bounded number of times.
  for (let attempt = 1; ; attempt++) {
    spec = await createSandbox(ctx.paths.data, {
      members: n,
      version,
      etcdBin,
      heartbeatMs,
      config,
      ports: attempt === 1 ? wanted : undefined,
    });
    const driver = localDriver(ctx.paths.data, spec, exec, ctx.env, undefined, ctx.debugSink);
    const clash = await startMembers(spec, driver, { version, binDir: etcdBin }, timeoutMs, session, p);
    if (!clash) break;
    if (attempt >= PORT_CLASH_ATTEMPTS) {
      p.fail('the sandbox did not start: its ports were taken');
      throw new OpsError(`kv sandbox: ${clash}; ${PORT_CLASH_ATTEMPTS} layouts on fresh ports each met a taken port`, 1, {
        code: 'sandbox_ports',
        hint: `see what holds ports on 127.0.0.1 (ss -ltnp), then: opsctl kv sandbox down; opsctl kv sandbox up`,
      });
    }
    ctx.io.warn(`${clash}: starting the sandbox again on fresh ports (layout ${attempt + 1} of ${PORT_CLASH_ATTEMPTS})`);
    await stopAll(spec, driver);
    await removeSandbox(ctx.paths.data);
  }
  p.succeed(`sandbox up: ${n} members, ${etcdBin ? `etcd ${version} from ${etcdBin}` : `simulated kv ${version}`}; the kv commands use it by default`);
  const up = spec;
  return {
    data: {
      dir: up.dir,
      kind: up.kind,
      members: up.members.map((m) => ({ name: m.name, endpoint: m.endpoint, peer: m.peerUrl, dataDir: m.dataDir, configFile: m.configFile })),
    },
    columns: undefined,
    text: up.members.map((m) => `${m.name}\t${m.endpoint}\t${m.dataDir}`).join('\n'),
  };
}

/** A member gone after its start: its log says whether a port was taken under it. */
class MemberExited extends WaitFatal {
  constructor(
    readonly member: MemberSpec,
    message: string,
  ) {
    super(message);
  }
}

/** The line of a member's log that says its port was taken (etcd: "bind: address already in use"; the simulated member: EADDRINUSE), if any. */
export function portTakenLine(log: string): string | undefined {
  return log
    .split('\n')
    .reverse()
    .find((l) => /address already in use|EADDRINUSE/.test(l))
    ?.trim()
    .slice(0, 300);
}

function readLog(m: MemberSpec): string {
  try {
    return m.logFile && existsSync(m.logFile) ? readFileSync(m.logFile, 'utf8').slice(-20_000) : '';
  } catch {
    return '';
  }
}

/**
 * Starts every member and waits until all are healthy with one leader. A port taken under a member
 * (its start refused it, or it died on "address already in use") is returned as what happened; any
 * other failure is thrown as before.
 */
async function startMembers(
  spec: SandboxSpec,
  driver: ReturnType<typeof localDriver>,
  target: { version: string; binDir?: string },
  timeoutMs: number,
  session: ReturnType<typeof openSession>,
  p: { update(text: string): void; fail(text: string): void },
): Promise<string | undefined> {
  const n = spec.members.length;
  const started = await Promise.allSettled(spec.members.map((m) => driver.start(m, target)));
  const taken = started.findIndex((r) => r.status === 'rejected' && r.reason instanceof OpsError && r.reason.code === 'port_taken');
  if (taken >= 0) return `${((started[taken] as PromiseRejectedResult).reason as Error).message}`;
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason as Error;
  try {
    await waitFor(
      async () => {
        const states = await Promise.all(
          spec.members.map(async (m) => {
            if (!(await driver.isRunning(m)))
              throw new MemberExited(m, `member ${m.name} exited after its start (its log: ${m.logFile}; its config: ${m.configFile})`);
            const c = new KvClient(m.endpoint, { timeoutMs: 1000, session });
            const h = await c.health();
            const v = await c.version();
            const s = await c.status();
            return h.healthy && v.cluster !== 'not_decided' ? s.leaderId : undefined;
          }),
        );
        const waiting = states.filter((s) => !s).length;
        p.update(waiting ? `waiting for ${waiting} of ${n} members to be healthy` : 'waiting for the members to agree on a leader');
        // Every member healthy, the cluster version decided, and one leader agreed by all.
        return states.every(Boolean) && new Set(states).size === 1 ? true : undefined;
      },
      { timeoutMs, pollMs: 100, what: 'sandbox healthy' },
    );
    return undefined;
  } catch (err) {
    const line = err instanceof MemberExited ? portTakenLine(readLog(err.member)) : undefined;
    if (err instanceof MemberExited && line) return `member ${err.member.name} exited at its start: a port of it was taken (its log: "${line}")`;
    p.fail('the sandbox did not become healthy');
    throw new OpsError(`kv sandbox: ${(err as Error).message}`, 1, { hint: `see the member logs under ${spec.dir}, then: opsctl kv sandbox down` });
  }
}

/** Stops the members of a layout given up (SIGTERM, then SIGKILL), waiting until each is gone. */
async function stopAll(spec: SandboxSpec, driver: ReturnType<typeof localDriver>): Promise<void> {
  await Promise.all(
    spec.members.map(async (m) => {
      if (!(await driver.isRunning(m))) return;
      await driver.stop(m);
      const gone = (ms: number) => waitFor(async () => ((await driver.isRunning(m)) ? undefined : true), { timeoutMs: ms, pollMs: 50, what: `${m.name} exit` });
      await gone(30_000).catch(async () => {
        await driver.kill(m);
        await gone(10_000);
      });
    }),
  );
}

/** `--ports`: two per member (client, then peer), each a port number; anything else refused naming the fix. */
export function portList(raw: string, members: number): number[] {
  const ports = raw.split(',').map((p) => p.trim());
  const bad = ports.find((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65_535);
  if (bad !== undefined)
    throw new UsageError(`--ports: "${bad}" is not a port`, {
      field: '--ports',
      hint: 'give port numbers 1-65535, comma-separated: client then peer, member by member',
    });
  if (ports.length !== members * 2)
    throw new UsageError(`--ports: ${ports.length} given, ${members * 2} needed (a client and a peer port for each of ${members} members)`, {
      field: '--ports',
    });
  // (a port given twice is tried twice: the member that loses it dies at its start, and the sandbox is laid out on fresh ports)
  return ports.map(Number);
}

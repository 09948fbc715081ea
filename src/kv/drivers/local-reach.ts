/**
 * A member that runs on this machine is reached here, whatever the driver: its running process is
 * found by the socket listening on its client port and read from /proc (host-script.ts's read script,
 * run with `sh -s` on this machine), so its trial needs no template. A member elsewhere needs a way
 * onto its host (a trial template such as `ssh {host} sudo sh -s`, the ssh or systemd driver's).
 */
import { networkInterfaces } from 'node:os';
import type { HostShellResult, ProgramCapabilities } from './driver.js';
import type { StartSettings } from './start-settings.js';
import { configFileOf } from './start-settings.js';
import { parseRead, readScript, type ReadOutcome } from './host-script.js';

type Exec = typeof import('execa').execa;

/** The address part of an endpoint, without IPv6 brackets. */
export function endpointHost(endpoint: string): string {
  try {
    return new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return '';
  }
}

/** An endpoint's host as ssh takes it (an IPv6 address without its brackets). */
export function hostOf(endpoint: string): string {
  return new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Whether `endpoint` names this machine: a loopback address, `localhost`, or an address of one of its interfaces. */
export function onThisHost(endpoint: string, interfaces: () => ReturnType<typeof networkInterfaces> = networkInterfaces): boolean {
  const h = endpointHost(endpoint);
  if (!h) return false;
  if (h === 'localhost' || h === '::1' || /^127\./.test(h)) return true;
  for (const list of Object.values(interfaces())) for (const a of list ?? []) if (a.address.toLowerCase() === h) return true;
  return false;
}

/**
 * A found member's command line as the same program on another version, when the program is one that
 * runs any version it is told (the sandbox's own program: kv/sandbox/members.ts gives it), with what a
 * flow may do with it; undefined for etcd, whose target binary replaces it.
 */
export type ProgramAt = (argv: readonly string[], version: string) => { program: string[]; args: string[]; capabilities: ProgramCapabilities } | undefined;

/** `sh -s` on this machine with `script` on its standard input, a clean environment but PATH. */
export async function shellHere(
  exec: Exec,
  script: string,
  timeoutMs: number,
  path = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
): Promise<HostShellResult> {
  const r = await exec('/bin/sh', ['-s'], { input: script, reject: false, timeout: timeoutMs, extendEnv: false, env: { PATH: path } });
  const failed = r.timedOut ? `\`sh -s\` timed out after ${timeoutMs} ms` : r.exitCode === undefined ? (r.originalMessage ?? '`sh -s` did not run') : undefined;
  return { stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode, ...(failed ? { failed } : {}) };
}

/**
 * Whether a process found on a member's client port is an etcd member (and not a tunnel, a proxy or another
 * server), or the driver's own program (`programAt` knows its command line).
 */
export function looksLikeEtcd(found: Extract<ReadOutcome, { kind: 'found' }>, programAt?: ProgramAt): boolean {
  const exe = found.exe.split('/').pop() ?? '';
  const prog = (found.argv[0] ?? '').split('/').pop() ?? '';
  if (/^etcd(?:[-.]|$)/.test(exe) || /^etcd(?:[-.]|$)/.test(prog)) return true;
  if (programAt?.(found.argv, '')) return true;
  // (a renamed binary: etcd's own flags or variables on its command line)
  const flags = found.argv.slice(1).some((a) => /^--?(name|data-dir|config-file|initial-cluster|listen-client-urls)(=|$)/.test(a));
  return flags || Object.keys(found.env).some((k) => /^ETCD_(NAME|DATA_DIR|CONFIG_FILE|LISTEN_CLIENT_URLS)$/.test(k));
}

/**
 * The settings a member's next start on `bin` runs with, read on its host by the read script through
 * `shell`: its command line, ETCD_* environment, working directory, user, and the config file it names.
 * `where` names the host in the messages ("127.0.0.1", "10.0.0.5").
 */
export async function readRunningSettings(
  shell: (script: string) => Promise<HostShellResult>,
  endpoint: string,
  bin: string,
  where: string,
  version = '',
  programAt?: ProgramAt,
): Promise<(StartSettings & { exe?: string; pid?: number }) | { why: string }> {
  const url = new URL(endpoint);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const r = await shell(readScript(port, endpointHost(endpoint)));
  if (r.failed) return { why: `reading its settings on its host failed: ${r.failed}` };
  // (parsed anew for each caller: a round's callers share the script's output, never one object)
  const found = parseRead(r.stdout);
  if (found.kind === 'none') return { why: `its process on its host: ${found.why}` };
  if (!looksLikeEtcd(found, programAt))
    return {
      why: `the process listening on ${url.host} on ${where} is ${found.exe || found.argv[0] || `pid ${found.pid}`}, not an etcd member (a tunnel or a proxy?): the member runs elsewhere; give the driver a trial template that reaches its host (driver.trial or --trial-cmd 'ssh {host} sudo sh -s')`,
    };
  const at = `pid ${found.pid} on ${where} (/proc)`;
  let config: StartSettings['config'];
  if (found.config !== undefined) {
    const file = configFileOf(found.argv.slice(1), found.env) ?? 'the config file';
    config = { file: `${file} on ${where}`, text: found.config };
  } else if (found.configError) return { why: `its config file ${found.configError}` };
  // The driver's own program is its own binary: the same program on the target's version, with its capabilities.
  const own = version ? programAt?.(found.argv, version) : undefined;
  return {
    program: own ? own.program : [bin],
    ...(found.exe ? { exe: found.exe } : {}),
    ...(Number.isSafeInteger(Number(found.pid)) ? { pid: Number(found.pid) } : {}),
    ...(own ? { capabilities: own.capabilities } : {}),
    args: own ? own.args : found.argv.slice(1),
    env: found.env,
    ...(config ? { config } : {}),
    ...(found.cwd ? { cwd: found.cwd } : {}),
    ...(found.uid !== undefined && found.gid !== undefined ? { user: { uid: found.uid, gid: found.gid } } : {}),
    from: { args: `the command line of ${at}`, env: `the environment of ${at}` },
  };
}

/** Why a member elsewhere cannot be reached, and the one thing that reaches it. */
export function noReach(m: { name: string; endpoint: string }): string {
  return `${m.name} runs on ${endpointHost(m.endpoint) || m.endpoint}, not on this machine, and the driver has no way onto its host: give it a trial template (driver.trial in the cluster file, or --trial-cmd 'ssh {host} sudo sh -s')`;
}

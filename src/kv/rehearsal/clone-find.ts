/**
 * Whether a command-driver cluster can be cloned for the rehearsal (kv/rehearsal/command-clone.ts runs the
 * clone), and of what: every member's process on this machine (paused with the others for the copy), its
 * data dir and WAL dir (copied, each copy mounted over its own path), and the record of how it runs now
 * (its command line, ETCD_* environment, working directory, user and version), which the clone starts first.
 * A start per version must be known: the driver's settings template prints it.
 */
import { join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { minor } from '../cluster/parse.js';
import { capabilitiesOf, type CloneOf, type CloneReach } from '../drivers/driver.js';
import { dataDirOf, type StartSettings } from '../drivers/start-settings.js';
import { endpointHost } from '../drivers/local-reach.js';
import { shellWord } from '../drivers/host-script.js';

/** Where the parent leaves the members' record in the clone's copy of opsctl's data directory. */
export const CLONE_RECORD = 'rehearsal/members.json';

/** Where, under opsctl's data directory in the clone, a fetched member's copies are: its paths below it as on its host. */
export function fetchedDir(dataDir: string, member: string): string {
  return join(dataDir, 'rehearsal', 'fetched', member);
}

/** A member as the clone starts it first: the cluster member as it runs now. */
export interface ClonedMember {
  name: string;
  /** Its minor, as its binary says (`etcd --version`). */
  version: string;
  exe: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  user?: { uid: number; gid: number };
  /** Its data dir and own WAL dir (the clone's copies are mounted over them): what the clone's checks read. */
  dataDir: string;
  walDir?: string;
  /** A member on another host: the paths brought here (kv/rehearsal/clone-away.ts), each copy mounted over its path in the member's own mount namespace. */
  fetched?: string[];
  /** (fetched) Its settings on each later minor, as the settings template printed them on its host. */
  settings?: Record<string, Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string }>;
  /** (fetched) The config template's output on each later minor. */
  configs?: Record<string, { file: string; text: string }>;
}

export type { CloneReach } from '../drivers/driver.js';

/**
 * Whether the members can be cloned here, and of what: each member's process on this machine (paused with
 * the others for the copy), its data dir and WAL dir (copied, each copy mounted over its path), its record.
 */
export async function findCommandClone(members: readonly MemberSpec[], r: CloneReach): Promise<CloneOf | { why: string }> {
  if (!r.settings)
    return {
      why: "the command driver's start on each version is not known to opsctl: a settings template prints it (driver.settings in the cluster file, or --settings-cmd)",
    };
  const away = members.filter((m) => !r.here(m));
  if (away.length)
    return {
      why: `${away.map((m) => m.name).join(', ')} ${away.length === 1 ? 'runs' : 'run'} on another host: a member's data is not copied off its host`,
    };
  const found = await Promise.all(members.map((m) => lookAt(m, r)));
  const why = found.find((f): f is { why: string } => 'why' in f);
  if (why) return why;
  const ok = found as Exclude<(typeof found)[number], { why: string }>[];
  const addresses = cloneAddresses(members);
  return {
    paths: [],
    pause: ok.map((f) => f.pid),
    outside: [...new Set(ok.flatMap((f) => [f.dataDir, ...(f.walDir ? [f.walDir] : [])]))],
    files: { [CLONE_RECORD]: `${JSON.stringify({ members: ok.map((f) => f.member) }, null, 2)}\n` },
    ...(addresses.length ? { addresses } : {}),
    operatorCwd: true,
    dirs: Object.fromEntries(ok.map((f) => [f.member.name, { dataDir: f.dataDir, ...(f.walDir ? { walDir: f.walDir } : {}) }])),
  };
}

async function lookAt(m: MemberSpec, r: CloneReach): Promise<{ why: string } | { pid: number; dataDir: string; walDir?: string; member: ClonedMember }> {
  const s = await r.running(m);
  if ('why' in s) return { why: `${m.name}: ${s.why}` };
  const can = capabilitiesOf(s);
  if (!can.etcdData) return { why: `${can.what} members keep no etcd data to rehearse on` };
  if (!s.pid || !s.exe) return { why: `${m.name}: its process's PID and binary could not be read from /proc` };
  const dirs = await dataDirOf(s);
  if (!dirs) return { why: `${m.name}: its data dir cannot be read from ${s.config?.file ?? s.from.args}` };
  const version = await runningMinor(m, r, s.exe);
  if (!version) return { why: `${m.name}: ${s.exe} --version printed no "etcd Version:"` };
  return { pid: s.pid, ...dirs, member: { ...runningMember(m, version, { ...s, exe: s.exe }), ...dirs } };
}

/** The minor of the binary a member runs, as `BIN --version` says on its host (undefined: it said none). */
export async function runningMinor(m: MemberSpec, r: Pick<CloneReach, 'shell'>, exe: string): Promise<string | undefined> {
  const v = await r.shell(m, `${shellWord(exe)} --version 2>&1 | sed -n 's/^etcd Version: //p'\n`);
  return minor(v.stdout.trim());
}

/** A member's record as it runs now (its process's binary, command line, ETCD_* environment, working directory, user), its dirs to add. */
export function runningMember(
  m: MemberSpec,
  version: string,
  s: Pick<StartSettings, 'args' | 'env' | 'cwd' | 'user'> & { exe: string },
): Omit<ClonedMember, 'dataDir'> {
  return { name: m.name, version, exe: s.exe, args: s.args, env: s.env, ...(s.cwd ? { cwd: s.cwd } : {}), ...(s.user ? { user: s.user } : {}) };
}

/** This host's addresses the members listen on besides loopback (CIDR, each once): the clone's loopback carries them too. */
export function cloneAddresses(members: readonly MemberSpec[]): string[] {
  const hosts = members.map((m) => endpointHost(m.endpoint)).filter((h) => h && h !== 'localhost' && h !== '::1' && !/^127\./.test(h));
  return [...new Set(hosts.map((h) => (h.includes(':') ? `${h}/128` : `${h}/32`)))];
}

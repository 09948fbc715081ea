/**
 * A cluster's driver entry, as the drivers take it: from a cluster file, a systemd preset expanded to
 * command templates, a container driver's host prefix and a command driver's templates checked, and a path on
 * a member's host that starts with `~` refused (driverOfEntry; the file itself is read and validated by
 * commands/kv/lib/cluster-file.ts); then the driver it names, built (openDriver). The one place outside a
 * driver's own code that tells the kinds apart, so that no flow or verb asks which driver it is
 * (test/unit/driver-boundary.test.ts).
 */
import { TEMPLATE_ROWS, type ClusterSpec, type CommandTemplates, type ContainerSpec } from '../cluster/cluster-file.js';
import { UsageError } from '../../core/errors.js';
import { templateProblem } from '../templates/argv.js';
import { expandSystemd, type SystemdPreset } from './systemd.js';
import { CommandDriver } from './command.js';
import type { Cloning, HostReads, MemberDriver } from './driver.js';
import type { ProgramAt } from './local-reach.js';

/** The driver entry as a cluster file gives it (`bins`: a command driver's etcd binary on the hosts per minor). */
export type DriverEntry = ({ type: 'command'; bins?: Record<string, string> } & CommandTemplates) | SystemdPreset | ContainerSpec;

/** The driver the entry of the cluster file at `path` names, checked; a usage error names the field. */
export function driverOfEntry(entry: DriverEntry | undefined, path: string): ClusterSpec['driver'] {
  remoteTilde(entry, path);
  let driver: ClusterSpec['driver'];
  if (entry?.type === 'systemd') {
    try {
      driver = { type: 'command', ...expandSystemd(entry) };
    } catch (err) {
      throw new UsageError(`--cluster ${path}: driver: ${(err as Error).message}`, { field: '--cluster', hint: 'see "Driver presets" in docs/kv-upgrade.md' });
    }
  } else if (entry?.type === 'container') {
    const problem = entry.onHost === undefined ? undefined : templateProblem(entry.onHost, []);
    if (problem)
      throw new UsageError(`--cluster ${path}: driver.onHost: ${problem}`, { field: '--cluster', hint: 'fix the prefix in the file; nothing was changed' });
    driver = { ...entry };
  } else if (entry) {
    const { bins, ...templates } = entry;
    driver = { ...templates, ...(bins ? { binByVersion: { ...bins } } : {}) };
  }
  if (driver?.type === 'command') {
    for (const [k, row] of TEMPLATE_ROWS) {
      const t = driver[k];
      const problem = t === undefined ? undefined : templateProblem(t, row.extra);
      if (problem)
        throw new UsageError(`--cluster ${path}: driver.${k}: ${problem}`, { field: '--cluster', hint: 'fix the template in the file; nothing was changed' });
    }
  }
  return driver;
}

/**
 * A path of the driver on the member's host (a preset's binaries, link, config file, data dir, tools; a
 * command driver's bins) that starts with `~`: opsctl passes it quoted, so no shell expands it there, and
 * this machine's home is not the host's. Refused with the fix rather than failing on the host.
 */
function remoteTilde(d: DriverEntry | undefined, path: string): void {
  if (!d) return;
  if (d.type === 'container') return;
  const paths: Array<[string, string | undefined]> = Object.entries(d.bins ?? {}).map(([v, p]) => [`bins.${v}`, p]);
  if (d.type === 'systemd')
    paths.push(['binLink', d.binLink], ['configFile', d.configFile], ['dataDir', d.dataDir], ['etcdctl', d.etcdctl], ['etcdutl', d.etcdutl]);
  const hit = paths.find(([, p]) => p?.startsWith('~'));
  if (hit)
    throw new UsageError(`--cluster ${path}: driver.${hit[0]}: ${JSON.stringify(hit[1])} is a path on the member's host, where nothing expands its ~`, {
      field: '--cluster',
      hint: `write it in full as it is on the host (e.g. /home/USER${hit[1]!.replace(/^~[^/]*/, '')}); nothing was changed`,
    });
}

/** What a driver is built with. */
export interface DriverParts {
  exec: typeof import('execa').execa;
  /** The environment of the driver's commands (opsctl's own: ssh agents, PATH). */
  env: NodeJS.ProcessEnv;
  /** What a member's command line runs where it is not etcd itself (the sandbox's simulated members). */
  programAt?: ProgramAt;
  /** The container driver, built by its own room (kv/containers imports this one, so this one cannot import it). */
  container(spec: ContainerSpec): Promise<MemberDriver>;
  /**
   * How a command driver's clone is found and run (kv/rehearsal/command-clone.ts, whose room imports this one):
   * `settings`, the driver has a settings template. Absent: its clonable() says it was not looked at.
   */
  commandCloning?: (self: CommandDriver, given: CommandCloningParts) => Cloning;
}

/**
 * What entry.ts gives a command driver's cloning: `settings`, the driver has a settings template; `answeredBy`, the
 * same driver with its reads of the members' hosts answered otherwise (inside a rehearsal's clone, for members
 * fetched from their hosts).
 */
export interface CommandCloningParts {
  settings: boolean;
  answeredBy: (reads: HostReads) => CommandDriver;
}

/** The driver of `spec` (none for no entry, or the sandbox's, which kv/sandbox builds). */
export async function openDriver(spec: ClusterSpec['driver'], parts: DriverParts): Promise<MemberDriver | undefined> {
  if (spec?.type === 'container') return parts.container(spec);
  if (spec?.type === 'command') {
    const d = new CommandDriver(spec, parts.exec, parts.env, undefined, parts.programAt);
    const cloning = parts.commandCloning;
    if (cloning)
      d.cloneBy = (self) =>
        cloning(self, {
          settings: Boolean(spec.settings),
          answeredBy: (reads) => new CommandDriver(spec, parts.exec, parts.env, undefined, parts.programAt, reads),
        });
    return d;
  }
  return undefined;
}

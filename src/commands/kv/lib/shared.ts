import type { Context } from '../../../context.js';
import { UsageError } from '../../../core/errors.js';
import {
  DRIVER_TEMPLATES,
  TEMPLATE_ROWS,
  type ClusterSpec,
  type CommandTemplates,
  type MemberSpec,
  type RequiredTemplate,
} from '../../../kv/cluster/cluster-file.js';
import { traced } from '../../../kv/drivers/traced.js';
import { templateProblem } from '../../../kv/templates/argv.js';
import { placeOf, type MemberDriver } from '../../../kv/drivers/driver.js';
import { DEFAULT_TIMEOUTS, type StepReporter, type Timeouts } from '../../../kv/upgrade/options.js';
import { clusterKey } from '../../../kv/journal/journal.js';
import type { KvSession } from '../../../kv/cluster/session.js';
import { durationFlag } from '../../../core/duration.js';
import { resolveConnection, type ConnectionFlags } from './connection.js';
import { localDriver, sandboxCluster } from '../../../kv/sandbox/sandbox.js';
import { fileConnection, findCluster, membersOf, openSession } from './target.js';
import { fileDriver } from './file-driver.js';
import { normalizeEndpoint } from './endpoint.js';

// cluster-file.ts needs it too: it lives in endpoint.ts so that cluster-file.ts does not import this file (no cycle)
export { normalizeEndpoint, openSession };

type Rows = typeof DRIVER_TEMPLATES;
/** The command driver's templates given as flags (`--stop-cmd`, … `--data-dir`, `--on-host`): one per row of DRIVER_TEMPLATES. */
export type TemplateFlags = { [K in keyof Rows as Rows[K]['flag']]?: string };

/** The flags every kv verb takes to find its cluster (and to reach it: TLS, auth). */
export interface ClusterFlags extends ConnectionFlags, TemplateFlags {
  endpoints?: string;
  cluster?: string;
  requestTimeout?: string;
}

/** `stopCmd` is `--stop-cmd`. */
const flagName = (option: string) => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * The command driver's templates from the flags, each checked (a usage error names the flag), or undefined
 * when none of --stop-cmd, --start-cmd and --running-cmd is given (they come together).
 */
export function templatesFromFlags(f: TemplateFlags): CommandTemplates | undefined {
  const given = (option: string): string | undefined => (f as Record<string, string | undefined>)[option];
  const required = TEMPLATE_ROWS.filter(([, row]) => row.required);
  if (!required.some(([, row]) => given(row.flag))) return undefined;
  for (const [, row] of required)
    if (!given(row.flag))
      throw new UsageError(`${flagName(row.flag)} is missing`, {
        field: flagName(row.flag),
        hint: 'give --stop-cmd, --start-cmd and --running-cmd together, e.g. --stop-cmd "ssh {host} sudo systemctl stop etcd"',
      });
  for (const [, row] of TEMPLATE_ROWS) {
    const v = given(row.flag);
    const problem = v === undefined ? undefined : templateProblem(v, row.extra);
    const flag = flagName(row.flag);
    if (problem) throw new UsageError(`${flag}: ${problem}`, { field: flag, hint: 'fix the template; nothing was changed' });
  }
  return Object.fromEntries(TEMPLATE_ROWS.map(([key, row]) => [key, given(row.flag)])) as unknown as CommandTemplates;
}

/** The flags that give the templates again in a command opsctl prints (kv rollback, kv restore) or runs (the rehearsal). */
export function carriedFlags(t: CommandTemplates): string[] {
  return TEMPLATE_ROWS.flatMap(([key, row]) => {
    const v = t[key];
    return row.carried && v ? [flagName(row.flag), v] : [];
  });
}

/** The cluster's driver as --endpoints names it: the templates the driver needs. */
function requiredOnly(t: CommandTemplates): Pick<CommandTemplates, RequiredTemplate> {
  return Object.fromEntries(TEMPLATE_ROWS.filter(([, row]) => row.required).map(([key]) => [key, t[key]])) as Pick<CommandTemplates, RequiredTemplate>;
}

/**
 * The cluster of a kv verb: --cluster FILE (YAML or JSON), --endpoints, or the sandbox that
 * `opsctl kv sandbox up` remembered. The driver comes from the file, the --*-cmd templates, or
 * (sandbox) the local driver. The session is how every request of the command reaches the cluster
 * (TLS, auth, one pool); it is closed when the command ends.
 */
export async function resolveCluster(
  ctx: Context,
  f: ClusterFlags,
): Promise<{ cluster: ClusterSpec; driver?: MemberDriver; selector: string[]; session: KvSession }> {
  const found = await clusterOf(ctx, f);
  // every driver call said on the debug sink (the crash-point seam: kv/drivers/traced.ts); as it is without one
  return found.driver && ctx.debugSink ? { ...found, driver: traced(found.driver, ctx.debugSink) } : found;
}

async function clusterOf(ctx: Context, f: ClusterFlags): Promise<{ cluster: ClusterSpec; driver?: MemberDriver; selector: string[]; session: KvSession }> {
  const exec = await ctx.exec();
  const found = await findCluster(ctx, f);
  if (found.source === 'file') {
    const { path, parsed } = found;
    const session = openSession(ctx, await resolveConnection(ctx, f, fileConnection(found)));
    const cluster: ClusterSpec = { source: 'file', key: clusterKey(parsed.members.map((m) => m.endpoint)), members: parsed.members, driver: parsed.driver };
    const driver = await fileDriver(ctx, parsed.driver, { trace: ctx.debugSink });
    driver?.checkMembers?.(parsed.members, `--cluster ${path}`);
    return { cluster, driver, selector: ['--cluster', f.cluster!], session };
  }
  const session = openSession(ctx, await resolveConnection(ctx, f));
  if (found.source === 'endpoints') {
    const eps = found.endpoints;
    const members = membersOf(found);
    await nameMembers(members, ctx, session, Math.min(2000, duration(f.requestTimeout, '--request-timeout', 2000)));
    // the endpoints as given, by flag or by ETCDCTL_ENDPOINTS: a printed command works in another shell too
    const selector = ['--endpoints', found.text];
    let driver: MemberDriver | undefined;
    const t = templatesFromFlags(f);
    if (t) {
      const command = (await fileDriver(ctx, { type: 'command', ...t }))!;
      // Names come from the cluster's own member list: data, checked before any template uses them.
      command.checkMembers?.(members, `${found.from} ${found.text}`);
      driver = command;
      selector.push(...carriedFlags(t));
    }
    return {
      cluster: { source: 'endpoints', key: clusterKey(eps), members, driver: t ? { type: 'command', ...requiredOnly(t) } : undefined },
      driver,
      selector,
      session,
    };
  }
  const sandbox = found.spec;
  return {
    cluster: sandboxCluster(sandbox),
    driver: localDriver(ctx.paths.data, sandbox, exec, ctx.env, (t) => ctx.io.warn(t), ctx.debugSink),
    selector: [],
    session,
  };
}

/** Names from the member list when a member answers (else host:port stays). */
async function nameMembers(members: MemberSpec[], ctx: Context, session: KvSession, timeoutMs: number): Promise<void> {
  const { KvClient } = await import('../../../kv/cluster/client.js');
  for (const m of members) {
    try {
      const list = await new KvClient(m.endpoint, { timeoutMs, debug: ctx.debugSink, session }).members();
      for (const x of members) {
        const hit = list.find((l) => l.clientUrls.some((u) => u.replace(/\/+$/, '') === x.endpoint));
        if (hit?.name) x.name = hit.name;
      }
      return;
    } catch (err) {
      ctx.debug(`member list from ${m.endpoint} failed: ${(err as Error).message}`);
    }
  }
}

export function duration(value: string | undefined, flag: string, fallback: number): number {
  return value === undefined ? fallback : durationFlag(flag, value);
}

export interface TimeoutFlags {
  requestTimeout?: string;
  stopTimeout?: string;
  healthyTimeout?: string;
  clusterVersionTimeout?: string;
  snapshotTimeout?: string;
  pollInterval?: string;
}

export function timeouts(f: TimeoutFlags): Timeouts {
  const d = DEFAULT_TIMEOUTS;
  return {
    requestMs: duration(f.requestTimeout, '--request-timeout', d.requestMs),
    stopMs: duration(f.stopTimeout, '--stop-timeout', d.stopMs),
    healthyMs: duration(f.healthyTimeout, '--healthy-timeout', d.healthyMs),
    clusterVersionMs: duration(f.clusterVersionTimeout, '--cluster-version-timeout', d.clusterVersionMs),
    snapshotMs: duration(f.snapshotTimeout, '--snapshot-timeout', d.snapshotMs),
    pollMs: duration(f.pollInterval, '--poll-interval', d.pollMs),
  };
}

/** Steps on stderr through the shared progress facility (a spinner per step on a terminal, one line per step otherwise). */
export function reporter(ctx: Context): StepReporter {
  const io = ctx.io;
  return {
    note: (text) => io.err(text),
    begin(text) {
      const p = io.progress(text);
      return { update: (t) => p.update(t), done: (t) => p.succeed(t), fail: (t) => p.fail(t) };
    },
  };
}

/** A command line, quoted for a POSIX shell (for the printed roll-back command). */
export function shellLine(argv: string[]): string {
  return argv.map((s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The flags of a rolling run (kv upgrade, kv downgrade), checked once: bad values are usage errors naming the flag. */
export function rollingFlags(
  opts: { snapshotVia: string; onFailure?: string; settle: string },
  oldSide: string,
): { onFailure: 'halt' | 'rollback'; settle: 'auto' | number } {
  if (!['auto', 'etcdctl', 'gateway'].includes(opts.snapshotVia))
    throw new UsageError(`--snapshot-via: "${opts.snapshotVia}" is not one of auto, etcdctl, gateway`, { field: '--snapshot-via' });
  const onFailure = opts.onFailure ?? 'halt';
  if (onFailure !== 'halt' && onFailure !== 'rollback')
    throw new UsageError(`--on-failure: "${onFailure}" is not one of halt, rollback`, {
      field: '--on-failure',
      hint: `halt stops at the failed member; rollback puts it back on ${oldSide} and data first`,
    });
  return { onFailure, settle: opts.settle === 'auto' ? 'auto' : duration(opts.settle, '--settle', 0) };
}

/** A command driver with no data-dir backup template refuses unless --no-backup said so (never a silent skip). */
export function requireBackupTemplate(driver: MemberDriver | undefined, { noBackup, example }: { noBackup: boolean; example: string }): void {
  // (members the operator's templates run keep their backups on their hosts, made by the driver's backup template)
  if (placeOf(driver).hostTemplates && !driver?.backupDataDir && !noBackup) {
    throw new UsageError('the command driver has no data-dir backup template', {
      field: '--backup-cmd',
      hint: `give one (${example}driver.backup in the cluster file, or dataDir in a systemd preset), or pass --no-backup; nothing was changed`,
    });
  }
}

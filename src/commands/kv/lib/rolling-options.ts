/**
 * The options the kv verbs that change a cluster build alike: what every run takes from the command's context
 * and the cluster it found (restore and rollback too), and the flags a rolling run (upgrade, downgrade) shares.
 */
import type { Context } from '../../../context.js';
import { UsageError } from '../../../core/errors.js';
import type { UpgradePolicy } from '../../../kv/upgrade/options.js';
import { LADDER_MINORS, LADDER_TARGETS } from '@opsctl/shared/etcd-ladder.js';
import { reporter, type resolveCluster, rollingFlags, shellLine, timeouts, type TimeoutFlags } from './shared.js';

/** The cluster a verb found: `resolveCluster`'s answer. */
type Found = Awaited<ReturnType<typeof resolveCluster>>;

/** What a run of a cluster-wide verb takes from the context and the cluster found: how it reaches the cluster and its members, where its records go, how it shows itself. */
export function clusterPorts(ctx: Context, { cluster, session, driver }: Found) {
  return {
    cluster,
    session,
    driver,
    dataDir: ctx.paths.data,
    now: ctx.now,
    reporter: reporter(ctx),
    signal: ctx.abort.signal,
    debug: ctx.debugSink,
  };
}

/** A rolling run's ports (kv upgrade, kv downgrade): the cluster's, how commands run, and the roll-back command it prints when it halts. */
export async function rollingPorts(ctx: Context, found: Found) {
  return { ...clusterPorts(ctx, found), exec: await ctx.exec(), rollbackCommand: shellLine(['opsctl', 'kv', 'rollback', ...found.selector]) };
}

/** The flags of a rolling run that set its policy. */
export interface PolicyFlags extends TimeoutFlags {
  snapshotVia: string;
  onFailure?: string;
  settle: string;
  etcdctl?: string;
  backup?: boolean;
  keepBackups?: boolean;
}

/**
 * A rolling run's policy from its flags (kv upgrade, kv downgrade), checked before the cluster is looked for: a bad
 * value is a usage error naming the flag. OLD_SIDE is where --on-failure rollback puts a member back.
 */
export function rollingPolicy(opts: PolicyFlags, oldSide: string) {
  const { onFailure, settle } = rollingFlags(opts, oldSide);
  return {
    onFailure,
    settle,
    timeouts: timeouts(opts),
    snapshotVia: opts.snapshotVia as UpgradePolicy['snapshotVia'],
    etcdctl: opts.etcdctl,
    noBackup: opts.backup === false,
    keepBackups: Boolean(opts.keepBackups),
  };
}

/**
 * `--target-bin`, repeatable: `VERSION=DIR` per hop, or one `DIR` for a one-hop run (key `*`).
 * Refused: a version that is not a ladder minor, the same version twice, an empty DIR.
 */
export function parseTargetBins(raw: string[] | string | undefined): Record<string, string> {
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const out: Record<string, string> = {};
  for (const item of list) {
    const m = /^(\d+\.\d+)=(.*)$/.exec(item);
    const [key, dir] = m ? [m[1]!, m[2]!] : ['*', item];
    if (!dir.trim())
      throw new UsageError(`--target-bin: "${item}" names no directory`, {
        field: '--target-bin',
        hint: 'write --target-bin 3.4=/opt/etcd-3.4 (or one DIR for a one-hop run)',
      });
    if (key !== '*' && !LADDER_MINORS.includes(key))
      throw new UsageError(`--target-bin ${item}: ${key} is not a minor of the ladder`, {
        field: '--target-bin',
        hint: `one of ${LADDER_TARGETS.join(', ')}`,
      });
    if (out[key] !== undefined)
      throw new UsageError(`--target-bin: ${key === '*' ? 'a directory' : key} given twice`, {
        field: '--target-bin',
        hint: 'give each hop one directory: --target-bin 3.3=DIR --target-bin 3.4=DIR …',
      });
    out[key] = dir;
  }
  return out;
}

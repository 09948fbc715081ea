/**
 * etcdctl's environment, read as etcdctl reads it (every global flag as ETCDCTL_<FLAG>), for the variables
 * opsctl honours: a flag beats its variable, opsctl's own variable (OPSCTL_KV_CACERT…) beats etcdctl's twin, and both beat
 * a cluster file's or the sandbox's settings. Where etcdctl ignores a bad value silently, opsctl refuses it
 * naming the variable.
 */
import type { Command } from 'commander';
import type { Context } from '../../../context.js';
import { UsageError } from '../../../core/errors.js';
import { parseGoDuration } from '../../../core/duration.js';
import type { CommandSpec, GroupSpec, VerbSpec } from '../../spec.js';

/** ETCDCTL_<NAME> as a duration in ms (undefined when unset); a value that is not a duration is refused naming the variable. */
export function envDuration(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const ms = parseGoDuration(raw);
  if (ms === undefined || ms <= 0)
    throw new UsageError(`${name}: "${raw}" is not a duration`, {
      field: name,
      hint: `write it as etcdctl takes it, with a unit: ${name}=5s (or 500ms, 1m30s); or unset it`,
    });
  return ms;
}

/** ETCDCTL_<NAME> as a boolean, as Go's strconv.ParseBool reads it (undefined when unset). */
export function envBool(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (/^(1|t|true)$/i.test(raw)) return true;
  if (/^(0|f|false)$/i.test(raw)) return false;
  throw new UsageError(`${name}: "${raw}" is not true or false`, { field: name, hint: `${name}=true or ${name}=false (or unset it)` });
}

/**
 * ETCDCTL_USER, as etcdctl's --user takes it: NAME, or NAME:PASSWORD (split at the first colon). The
 * password may come from ETCDCTL_PASSWORD instead, not from both (etcdctl refuses that too).
 */
export function envUser(env: NodeJS.ProcessEnv): { user: string; password?: string } | undefined {
  const raw = env.ETCDCTL_USER;
  if (raw === undefined || raw === '') return undefined;
  const at = raw.indexOf(':');
  if (at === 0) throw new UsageError('ETCDCTL_USER: no user name before the colon', { field: 'ETCDCTL_USER', hint: 'ETCDCTL_USER=NAME or NAME:PASSWORD' });
  if (at === -1) return { user: raw };
  if (env.ETCDCTL_PASSWORD)
    throw new UsageError('ETCDCTL_USER carries a password and ETCDCTL_PASSWORD is set too', {
      field: 'ETCDCTL_PASSWORD',
      hint: 'give the password in one of them: ETCDCTL_USER=NAME with ETCDCTL_PASSWORD, or ETCDCTL_USER=NAME:PASSWORD alone',
    });
  return { user: raw.slice(0, at), password: raw.slice(at + 1) };
}

/**
 * The verbs of a kv group, each run given `--request-timeout` from ETCDCTL_COMMAND_TIMEOUT when the flag
 * (or its etcdctl spelling --command-timeout) is not given: one place for every verb that has the flag,
 * before its run reads it (a bad value is refused naming the variable, before anything is sent).
 */
export function withCommandTimeout(group: GroupSpec): GroupSpec {
  return { ...group, verbs: group.verbs.map((v): CommandSpec => ('verbs' in v ? withCommandTimeout(v) : verbWithCommandTimeout(v))) };
}

/** One kv verb as withCommandTimeout makes it: its run given ETCDCTL_COMMAND_TIMEOUT when it has --request-timeout and that is not given. */
export function verbWithCommandTimeout(v: VerbSpec): VerbSpec {
  if (!v.flags || !('requestTimeout' in v.flags)) return v;
  return {
    ...v,
    load: () =>
      v.load().then((m) => ({
        run: (opts: never, ctx: Context, cmd: Command) => {
          const given = opts as Record<string, unknown>;
          const ms = given.requestTimeout === undefined ? envDuration(ctx.env, 'ETCDCTL_COMMAND_TIMEOUT') : undefined;
          return m.run((ms === undefined ? given : { ...given, requestTimeout: `${ms}ms` }) as never, ctx, cmd);
        },
      })),
  };
}

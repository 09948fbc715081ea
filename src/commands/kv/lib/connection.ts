import { existsSync } from 'node:fs';
import { readLocalFileSync } from '../../../core/local-file.js';
import { dirname, resolve } from 'node:path';
import type { Context } from '../../../context.js';
import { UsageError } from '../../../core/errors.js';
import { fileFix, fileProblem } from '../../../core/file-errors.js';
import { whyNoPrompt } from '../../../core/no-prompt.js';
import { expandHome } from '../../lib/home-path.js';
import { keyFileWarning, type KvConnection, type KvTls } from '../../../kv/cluster/connection.js';
import { durationFlag } from '../../../core/duration.js';
import { envBool, envDuration, envUser } from './etcdctl-env.js';

/** TLS and auth flags of every kv verb (etcdctl's names). */
export interface ConnectionFlags {
  cacert?: string;
  cert?: string;
  key?: string;
  insecureSkipTlsVerify?: boolean;
  user?: string;
  passwordFile?: string;
  dialTimeout?: string;
}

/** The `tls:` and `auth:` blocks of a cluster file (paths relative to the file). */
export interface FileConnection {
  tls?: { cacert?: string; cert?: string; key?: string; insecureSkipTlsVerify?: boolean };
  auth?: { user: string; passwordFile?: string };
}

/**
 * The cluster's connection settings: a flag beats its environment variable (OPSCTL_KV_CACERT,
 * OPSCTL_KV_CERT, OPSCTL_KV_KEY, OPSCTL_KV_INSECURE_SKIP_TLS_VERIFY=1, OPSCTL_KV_USER,
 * OPSCTL_KV_PASSWORD, OPSCTL_KV_PASSWORD_FILE, then etcdctl's own ETCDCTL_CACERT, ETCDCTL_CERT,
 * ETCDCTL_KEY, ETCDCTL_INSECURE_SKIP_TLS_VERIFY, ETCDCTL_USER (NAME or NAME:PASSWORD), ETCDCTL_PASSWORD,
 * ETCDCTL_DIAL_TIMEOUT), which beats the cluster file. Files are checked here (a usage error names the
 * flag or the variable); a key readable by others and skipped verification are warned about. The
 * password never comes from a flag value: the prompt, a variable or a file.
 */
export async function resolveConnection(ctx: Context, f: ConnectionFlags, file?: { conn: FileConnection; path: string }): Promise<KvConnection> {
  const env = ctx.env;
  const home = homeOf(ctx);
  const base = file ? dirname(file.path) : ctx.cwd;
  const pick = (flag: string | undefined, envNames: string[], fromFile: string | undefined, name: string): { path: string; from: string } | undefined => {
    if (flag) return { path: resolve(ctx.cwd, flag), from: `--${name}` };
    const envName = envNames.find((n) => env[n]);
    if (envName) return { path: resolve(ctx.cwd, home(env[envName]!, name, envName)), from: envName };
    if (fromFile) return { path: resolve(base, home(fromFile, name, `tls.${name} in ${file!.path}`)), from: `tls.${name} in ${file!.path}` };
    return undefined;
  };
  const ft = file?.conn.tls;
  const tls: KvTls = {};
  for (const [name, envNames] of [
    ['cacert', ['OPSCTL_KV_CACERT', 'ETCDCTL_CACERT']],
    ['cert', ['OPSCTL_KV_CERT', 'ETCDCTL_CERT']],
    ['key', ['OPSCTL_KV_KEY', 'ETCDCTL_KEY']],
  ] as const) {
    const p = pick(f[name], [...envNames], ft?.[name], name);
    if (!p) continue;
    try {
      readLocalFileSync(p.path, { what: `${p.from}:`, exitCode: 2, maxBytes: 1024 * 1024 });
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const wanted = `a PEM file (${name === 'cacert' ? 'the CA bundle' : name === 'cert' ? 'the client certificate' : 'the client key'})`;
      throw new UsageError(`${p.from}: ${p.path} ${fileProblem(err)}`, {
        field: p.from.startsWith('--') || p.from.startsWith('tls.') ? `--${name}` : p.from,
        hint: `${fileFix(err, p.path) ?? 'fix the file'}; it must be ${wanted}`,
      });
    }
    tls[name] = p.path;
  }
  if (Boolean(tls.cert) !== Boolean(tls.key)) {
    throw new UsageError(tls.cert ? '--cert needs --key' : '--key needs --cert', {
      field: tls.cert ? '--key' : '--cert',
      hint: 'a client certificate goes with its private key: give both',
    });
  }
  tls.insecureSkipVerify = Boolean(
    f.insecureSkipTlsVerify ||
    env.OPSCTL_KV_INSECURE_SKIP_TLS_VERIFY === '1' ||
    (env.OPSCTL_KV_INSECURE_SKIP_TLS_VERIFY === undefined && envBool(env, 'ETCDCTL_INSECURE_SKIP_TLS_VERIFY')) ||
    ft?.insecureSkipTlsVerify,
  );
  if (tls.insecureSkipVerify) ctx.io.warn("--insecure-skip-tls-verify: the members' certificates are not checked; anyone on the path can pose as the cluster");
  if (tls.key) {
    const w = keyFileWarning(tls.key);
    if (w) ctx.io.warn(w.replace(/^warning: /, ''));
  }
  const out: KvConnection = {};
  if (tls.cacert || tls.cert || tls.insecureSkipVerify) out.tls = tls;

  const dial = dialTimeout(f, env);
  if (dial !== undefined) out.dialTimeoutMs = dial;

  if (f.user?.includes(':'))
    throw new UsageError('--user: a password after the colon is not taken from a flag (others see command lines in ps)', {
      field: '--user',
      hint: 'give the user name alone, and the password at the prompt, with --password-file, OPSCTL_KV_PASSWORD or ETCDCTL_PASSWORD (or ETCDCTL_USER=NAME:PASSWORD)',
    });
  const etcdctlUser = f.user === undefined && !env.OPSCTL_KV_USER ? envUser(env) : undefined;
  const user = f.user ?? (env.OPSCTL_KV_USER || undefined) ?? etcdctlUser?.user ?? file?.conn.auth?.user;
  if (user) out.auth = { user, password: etcdctlUser?.password ?? (await password(ctx, f, user, file)) };
  else if (f.passwordFile) throw new UsageError('--password-file needs --user', { field: '--user', hint: 'pass --user NAME' });
  return out;
}

/** --dial-timeout, else ETCDCTL_DIAL_TIMEOUT; undefined: no limit of its own (the request timeout covers the connection). */
function dialTimeout(f: ConnectionFlags, env: NodeJS.ProcessEnv): number | undefined {
  if (f.dialTimeout !== undefined) return durationFlag('--dial-timeout', f.dialTimeout, { positive: true });
  return envDuration(env, 'ETCDCTL_DIAL_TIMEOUT');
}

/**
 * A path from the environment or a cluster file with its leading `~` expanded (the flags' are, by their
 * spec): nothing expands it in a variable set by a tool or in a YAML value. `label` says where it came from.
 */
function homeOf(ctx: Context): (path: string, flag: string, label: string) => string {
  return (path, flag, label) => expandHome(path, { flag, home: ctx.env.HOME, label });
}

/** The text up to the first line break (all of it without one). */
function firstLine(text: string): string {
  const end = text.search(/\r?\n/);
  return end === -1 ? text : text.slice(0, end);
}

async function password(ctx: Context, f: ConnectionFlags, user: string, file?: { conn: FileConnection; path: string }): Promise<string> {
  const env = ctx.env;
  const fromFile = f.passwordFile
    ? { path: resolve(ctx.cwd, f.passwordFile), from: '--password-file' }
    : env.OPSCTL_KV_PASSWORD_FILE
      ? { path: resolve(ctx.cwd, homeOf(ctx)(env.OPSCTL_KV_PASSWORD_FILE, 'password-file', 'OPSCTL_KV_PASSWORD_FILE')), from: 'OPSCTL_KV_PASSWORD_FILE' }
      : file?.conn.auth?.passwordFile
        ? {
            path: resolve(dirname(file.path), homeOf(ctx)(file.conn.auth.passwordFile, 'password-file', `auth.passwordFile in ${file.path}`)),
            from: `auth.passwordFile in ${file.path}`,
          }
        : undefined;
  if (fromFile) {
    if (!existsSync(fromFile.path))
      throw new UsageError(`${fromFile.from}: ${fromFile.path} does not exist`, {
        field: '--password-file',
        hint: 'give a file holding the password (its first line)',
      });
    const w = keyFileWarning(fromFile.path);
    if (w) ctx.io.warn(w.replace(/^warning: the key file/, 'the password file'));
    return firstLine(readLocalFileSync(fromFile.path, { what: `${fromFile.from}:`, exitCode: 2, maxBytes: 64 * 1024 }));
  }
  if (env.OPSCTL_KV_PASSWORD !== undefined) return env.OPSCTL_KV_PASSWORD;
  if (env.ETCDCTL_PASSWORD) return env.ETCDCTL_PASSWORD;
  const hint = `pass --password-file FILE or set OPSCTL_KV_PASSWORD or ETCDCTL_PASSWORD (${whyNoPrompt(ctx)})`;
  if (!ctx.io.canPrompt({ noInput: ctx.noInput })) throw new UsageError(`--user ${user}: no password`, { field: '--password-file', hint });
  // Through the context's prompter: Ctrl-C at the prompt is an interrupt (130), like every prompt.
  return (await ctx.prompter()).password(`etcd password for ${user}`, { field: '--password-file', hint });
}

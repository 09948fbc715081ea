import type { CommandTemplates, MemberSpec } from '../cluster.js';
import type { DataLayout, MemberDriver, MemberTarget } from './driver.js';
import type { RestoreRequest } from '../restore-data.js';

type Exec = typeof import('execa').execa;

/**
 * Splits a template into argv tokens (whitespace separates; single or double quotes group) and
 * substitutes {host}, {name}, {endpoint}, {version}, {bin} (and {run} in the backup template) inside each token. No shell is involved,
 * so a value can never inject a command.
 */
export function renderTemplate(template: string, vars: Record<string, string | undefined>): string[] {
  const tokens: string[] = [];
  let cur = '';
  let quote: string | undefined;
  let has = false;
  for (const c of template) {
    if (quote) {
      if (c === quote) quote = undefined;
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) tokens.push(cur);
      cur = '';
      has = false;
    } else cur += c;
  }
  if (quote) throw new Error(`unbalanced quote in template: ${template}`);
  if (has || cur) tokens.push(cur);
  return tokens.map((t) =>
    t.replace(/\{(\w+)\}/g, (whole, k: string) => {
      const v = vars[k];
      if (v === undefined) throw new Error(`template ${template}: no value for {${k}}`);
      return v;
    }),
  );
}

/** The placeholders every template may use; the backup template also has {run}. */
export const TEMPLATE_VARS = ['host', 'name', 'endpoint', 'version', 'bin'] as const;

/**
 * What is wrong with a template before anything runs (an unknown {placeholder}, an unbalanced
 * quote), or undefined. `extra`: placeholders this template has besides TEMPLATE_VARS.
 */
/** The placeholders a template has beyond the common ones, by template name (file key or flag stem). */
export const TEMPLATE_EXTRA: Readonly<Record<string, readonly string[]>> = {
  backup: ['run'],
  restore: ['snapshot', 'peer', 'cluster', 'token', 'run'],
  restoreBackup: ['run'],
  'restore-backup': ['run'],
  restoreCheck: ['snapshot', 'peer', 'cluster', 'token', 'run'],
  'restore-check': ['snapshot', 'peer', 'cluster', 'token', 'run'],
};

export function templateProblem(template: string, extra: readonly string[] = []): string | undefined {
  const known = new Set<string>([...TEMPLATE_VARS, ...extra]);
  try {
    renderTemplate(template, Object.fromEntries([...known].map((k) => [k, 'x'])));
    return undefined;
  } catch (err) {
    const unknown = /no value for \{(\w+)\}/.exec((err as Error).message)?.[1];
    if (unknown) return `unknown placeholder {${unknown}} (known: ${[...known].map((k) => `{${k}}`).join(', ')})`;
    return (err as Error).message;
  }
}

/** A rendered template's first token and the rest; a template of blanks only (which the checks let through) has none. */
function firstAndRest(template: string, tokens: string[]): [string, ...string[]] {
  const [first, ...rest] = tokens;
  if (first === undefined) throw new Error(`template ${JSON.stringify(template)} is empty`);
  return [first, ...rest];
}

/** Real hosts: templates such as `ssh {host} sudo systemctl stop etcd`, run with execa (no shell). */
export class CommandDriver implements MemberDriver {
  readonly type = 'command';
  private readonly versions = new Map<string, MemberTarget>();

  /** Present only when a data-dir template is given. */
  readonly dataLayout?: (m: MemberSpec) => Promise<DataLayout>;

  /** Present only when a backup template is given (the executor then runs it after each stop). */
  readonly backupDataDir?: (m: MemberSpec, dest: string, run: string) => Promise<string>;

  constructor(
    private readonly t: CommandTemplates,
    private readonly exec: Exec,
    /** The environment of the commands (opsctl's own: ssh agents, PATH). */
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly timeoutMs = 60_000,
  ) {
    const dataDir = t.dataDir;
    if (dataDir) this.dataLayout = (m) => this.layout(m, dataDir);
    const backup = t.backup;
    if (backup) {
      this.backupDataDir = async (m, _dest, run) => {
        const r = await this.run(backup, m, undefined, true, { run });
        const out = String(r.stdout ?? '')
          .trim()
          .split('\n')
          .pop();
        return `\`${renderTemplate(backup, this.vars(m, undefined, { run })).join(' ')}\` done${out ? `: ${out.slice(0, 120)}` : ''}`;
      };
    }
  }

  private vars(m: MemberSpec, target?: MemberTarget, extra: Record<string, string> = {}) {
    return {
      host: m.host ?? new URL(m.endpoint).hostname,
      name: m.name,
      endpoint: m.endpoint,
      version: target?.version ?? '',
      bin: target?.binDir ?? '',
      ...extra,
    };
  }

  private async run(template: string, m: MemberSpec, target?: MemberTarget, reject = true, extra: Record<string, string> = {}) {
    const [file, ...args] = firstAndRest(template, renderTemplate(template, this.vars(m, target, extra)));
    const r = await this.exec(file, args, { reject: false, timeout: this.timeoutMs, stdin: 'ignore', env: this.env, extendEnv: false });
    if (reject && r.exitCode !== 0) {
      const why = r.timedOut ? `timed out after ${this.timeoutMs} ms` : r.exitCode === undefined ? (r.originalMessage ?? 'did not run') : `exit ${r.exitCode}`;
      const last = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      throw new Error(`\`${[file, ...args].join(' ')}\` failed (${why})${last ? `: ${last}` : ''}`);
    }
    return r;
  }

  async stop(m: MemberSpec): Promise<void> {
    await this.run(this.t.stop, m);
  }

  /**
   * Exit 0: running; another exit: not running. But exit 255 (ssh's own failure: the host is
   * unreachable, its key refused), a timeout or a command that did not run say nothing about the
   * member: that is an error, never "the process is gone".
   */
  async isRunning(m: MemberSpec): Promise<boolean> {
    const r = await this.run(this.t.running, m, undefined, false);
    if (r.exitCode === 0) return true;
    if (r.exitCode === 255 || r.timedOut || r.exitCode === undefined) {
      const argv = renderTemplate(this.t.running, this.vars(m));
      const why = r.timedOut
        ? `timed out after ${this.timeoutMs} ms`
        : r.exitCode === 255
          ? 'exit 255: could not reach the host'
          : (r.originalMessage ?? 'did not run');
      const last = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      throw new Error(`cannot tell whether ${m.name} runs: \`${argv.join(' ')}\` failed (${why})${last ? `: ${last}` : ''}`);
    }
    return false;
  }

  async start(m: MemberSpec, target: MemberTarget): Promise<void> {
    await this.run(this.t.startByVersion?.[target.version] ?? this.t.start, m, target);
    this.versions.set(m.name, target);
  }

  async v2DataBytes(m: MemberSpec): Promise<number | undefined> {
    if (!this.t.v2Size) return undefined;
    const r = await this.run(this.t.v2Size, m);
    const n = Number(String(r.stdout).trim().split(/\s+/)[0]);
    return Number.isFinite(n) ? n : undefined;
  }

  /** The config template's output; the file is the last absolute path in its argv (else the command). */
  async readConfig(m: MemberSpec, target: MemberTarget): Promise<{ file: string; text: string } | undefined> {
    if (!this.t.config) return undefined;
    const argv = renderTemplate(this.t.config, this.vars(m, target));
    const r = await this.run(this.t.config, m, target);
    const file = [...argv].reverse().find((a) => a.startsWith('/')) ?? `\`${argv.join(' ')}\``;
    return { file, text: String(r.stdout ?? '') };
  }

  /** --on-failure rollback: the restoreBackup template ({run}: the upgrade id of the backup). */
  get restoreBackup(): ((m: MemberSpec, dest: string, run: string) => Promise<string>) | undefined {
    const tpl = this.t.restoreBackup;
    if (!tpl) return undefined;
    return async (m, _dest, run) => {
      await this.run(tpl, m, undefined, true, { run });
      return `\`${renderTemplate(tpl, this.vars(m, undefined, { run })).join(' ')}\` done`;
    };
  }

  /** kv restore: the restoreCheck template, when given (reachable host, data dir there). */
  async checkRestore(m: MemberSpec, r: RestoreRequest): Promise<string> {
    if (!this.t.restore) throw new Error('the driver has no restore template (driver.restore in the cluster file, or --restore-cmd)');
    if (!this.t.restoreCheck) return 'no restore check template: the host and data dir were not checked';
    await this.run(this.t.restoreCheck, m, r.target, true, restoreVars(r));
    return `\`${renderTemplate(this.t.restoreCheck, this.vars(m, r.target, restoreVars(r))).join(' ')}\` ok`;
  }

  async restoreData(m: MemberSpec, r: RestoreRequest): Promise<string> {
    const r2 = await this.run(this.t.restore!, m, r.target, true, restoreVars(r));
    const out = String(r2.stdout ?? '')
      .trim()
      .split('\n')
      .pop();
    return `\`${renderTemplate(this.t.restore!, this.vars(m, r.target, restoreVars(r))).join(' ')}\` done${out ? `: ${out.slice(0, 160)}` : ''}`;
  }

  /** `ls -d` of the paths that matter, on the member's host (the onHost prefix); exit 2 only says one is missing. */
  private async layout(m: MemberSpec, dataDir: string): Promise<DataLayout> {
    const [dir] = firstAndRest(dataDir, renderTemplate(dataDir, this.vars(m)));
    const paths = { exists: `${dir}/member`, wal: `${dir}/member/wal`, db: `${dir}/member/snap/db` };
    // argv[0] is the on-host prefix's first word, else 'ls' (so the `?? 'ls'` below is never taken).
    const argv = [...(this.t.onHost ? renderTemplate(this.t.onHost, this.vars(m)) : []), 'ls', '-d', ...Object.values(paths)];
    const r = await this.exec(argv[0] ?? 'ls', argv.slice(1), { reject: false, timeout: this.timeoutMs, stdin: 'ignore', env: this.env, extendEnv: false });
    if (r.exitCode !== 0 && r.exitCode !== 2) {
      const last = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      throw new Error(`\`${argv.join(' ')}\` failed (${r.timedOut ? 'timed out' : `exit ${r.exitCode ?? '?'}`})${last ? `: ${last}` : ''}`);
    }
    const found = new Set(
      String(r.stdout ?? '')
        .split('\n')
        .map((l) => l.trim()),
    );
    return { dir, exists: found.has(paths.exists), wal: found.has(paths.wal), db: found.has(paths.db) };
  }

  current(m: MemberSpec): MemberTarget | undefined {
    return this.versions.get(m.name);
  }
}

/** The restore template's variables: {snapshot} {peer} {cluster} {token} {run} ({name}, {host}, {version}, {bin} as everywhere). */
function restoreVars(r: RestoreRequest): Record<string, string> {
  return { snapshot: r.snapshot, peer: r.peerUrl, cluster: r.initialCluster, token: r.token, run: r.run };
}

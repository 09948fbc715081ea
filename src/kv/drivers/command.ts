import { TEMPLATE_ROWS, type CommandTemplates, type MemberSpec } from '../cluster/cluster-file.js';
import type { CloneOf, CopySize, DataLayout, HostShellResult, MemberDriver, MemberTarget, RestoreRequest, SettingsReads, V2SizeRead } from './driver.js';
import { BY_HOST_TEMPLATES, sharedRead, type Cloning, type HostReads } from './driver.js';
import { configFileOf, settingsOutput, type StartSettings } from './start-settings.js';
import type { MemberDirs } from '../wal/v2-data.js';
import type { WalMark } from '../wal/wal-mark.js';
import { hostOf, noReach, onThisHost, readRunningSettings, shellHere, type ProgramAt } from './local-reach.js';
import { HostData, hostV2Size, readHostFile, shellWord } from './host-script.js';
import { measureHostCopy } from './host-copy.js';
import { valueProblem } from '../cluster/cluster-file.js';
import { compareMinor, minor } from '../cluster/parse.js';
import { UsageError } from '../../core/errors.js';
import { backupNeeds, parseSpaceReport, type BackupSpace } from './space.js';
import { compileTemplate, displayArgv, renderArgv, TEMPLATE_VARS, TemplateError, type Template } from '../templates/argv.js';

type Exec = typeof import('execa').execa;

/** A value for a message: JSON-quoted, so control characters and quotes show as escapes. */
const shown = (v: string) => JSON.stringify(v);

/** Real hosts: templates such as `ssh {host} sudo systemctl stop etcd`, run with execa (no shell here; quoted where ssh crosses one). */
export class CommandDriver implements MemberDriver {
  readonly type = 'command';
  readonly place = BY_HOST_TEMPLATES;
  private readonly versions = new Map<string, MemberTarget>();
  private readonly compiled = new Map<string, Template>();

  /** Present only when a data-dir template is given. */
  readonly dataLayout?: (m: MemberSpec) => Promise<DataLayout>;

  /**
   * A shell script run on the member's host: the trial template (`ssh {host} sudo sh -s`) when given,
   * else `sh -s` here for a member whose endpoint is on this machine; else it fails naming the template.
   */
  readonly hostShell: (m: MemberSpec, script: string, timeoutMs: number) => Promise<HostShellResult>;

  /** The running member's settings, read on its host from /proc (through hostShell). */
  readonly startSettings: (m: MemberSpec, target: MemberTarget, reads?: SettingsReads) => Promise<StartSettings | { why: string }>;

  /** Present only when a stage template is given: run on every member before a hop's first stop. */
  readonly stage?: (m: MemberSpec, target: MemberTarget) => Promise<string>;

  /** Present only when a backup template is given (the executor then runs it after each stop). */
  readonly backupDataDir?: (m: MemberSpec, dest: string, run: string) => Promise<string>;
  /** With a backup template: its copy under {run} measured on the member's host (host-copy.ts). */
  readonly copySize?: (m: MemberSpec, run: string) => Promise<CopySize & { path?: string }>;

  /**
   * Present only when a space template is given: the backup's space on the member's host (its output:
   * `du -sk DATA_DIR` then `df -Pk BACKUP_DIR`), dest named host:mount point.
   */
  readonly backupSpace?: (m: MemberSpec) => Promise<BackupSpace & { host: string }>;

  constructor(
    private readonly t: CommandTemplates,
    private readonly exec: Exec,
    /** The environment of the commands (opsctl's own: ssh agents, PATH). */
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly timeoutMs = 60_000,
    private readonly programAt?: ProgramAt,
    answered?: HostReads,
  ) {
    // Every template parsed now: a bad one fails here, before any member is touched.
    for (const tpl of this.templates()) {
      try {
        this.compile(tpl);
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        throw new UsageError(`template ${JSON.stringify(tpl)}: ${err.message}`, { code: 'template', hint: 'fix the template; nothing was run' });
      }
    }
    const dataDir = t.dataDir;
    if (dataDir) this.dataLayout = (m) => this.layout(m, dataDir);
    const trial = t.trial;
    this.hostShell = (m, script, timeoutMs) => {
      if (trial) return this.shell(trial, m, script, timeoutMs);
      if (onThisHost(m.endpoint)) return shellHere(this.exec, script, timeoutMs, this.env.PATH);
      return Promise.resolve({ stdout: '', stderr: '', failed: noReach(m) });
    };
    this.startSettings = (m, target, reads) => this.readSettings(m, target, reads);
    // (`answered`: its reads of the members' hosts answered otherwise, inside a rehearsal's clone: kv/rehearsal/command-clone.ts)
    if (answered) Object.assign(this, answered);
    const space = t.space;
    if (space) this.backupSpace = (m) => this.measureSpace(m, space);
    if (t.stage || t.stageByVersion) {
      this.stage = (m, target) => {
        const tpl = t.stageByVersion?.[target.version] ?? t.stage;
        // (a preset that stages some versions only: the others have nothing to stage here)
        return tpl ? this.runStage(m, target, tpl) : Promise.resolve(`nothing to stage for ${target.version}`);
      };
    }
    const backup = t.backup;
    if (backup) {
      this.backupDataDir = async (m, _dest, run) => {
        const r = await this.run(backup, m, { extra: { run } });
        const out = String(r.stdout ?? '')
          .trim()
          .split('\n')
          .pop();
        return `\`${displayArgv(r.argv)}\` done${out ? `: ${out.slice(0, 120)}` : ''}`;
      };
      this.copySize = async (m, run) => measureHostCopy(this, m, this.argv(backup, m, undefined, { run }), run, this.vars(m).host, this.timeoutMs);
    }
  }

  /** Every command template the driver may run (the data-dir check's command included). */
  private templates(): string[] {
    const t = this.t;
    const all = [
      ...TEMPLATE_ROWS.filter(([, row]) => row.kind === 'command').map(([key]) => t[key]),
      ...Object.values(t.startByVersion ?? {}),
      ...Object.values(t.stageByVersion ?? {}),
      ...Object.values(t.restoreByVersion ?? {}),
      ...Object.values(t.settingsByVersion ?? {}),
    ];
    if (t.dataDir) all.push(t.dataDir, this.layoutTemplate());
    return all.filter((x): x is string => x !== undefined);
  }

  private compile(template: string): Template {
    let c = this.compiled.get(template);
    if (!c) {
      c = compileTemplate(template);
      this.compiled.set(template, c);
    }
    return c;
  }

  /**
   * Refuses, before anything runs, a member whose name, host or endpoint a template uses and that
   * value breaks its rule (VALUE_RULES in cluster.ts): names from the cluster's member list are
   * data, never code. Every problem is named at once; nothing was run.
   */
  checkMembers(members: readonly MemberSpec[], source: string): void {
    const used = new Set<string>();
    for (const tpl of this.templates()) for (const p of this.compile(tpl).placeholders) used.add(p);
    const problems: string[] = [];
    for (const m of members) {
      const v = this.vars(m);
      for (const k of ['name', 'host', 'endpoint'] as const) {
        if (!used.has(k)) continue;
        const p = valueProblem(k, v[k]);
        if (p) problems.push(`member ${shown(m.name)}: {${k}} ${shown(v[k])}: ${p}`);
      }
    }
    if (problems.length)
      throw new UsageError(`${source}: ${problems.length === 1 ? problems[0] : `\n  - ${problems.join('\n  - ')}`}`, {
        code: 'unsafe_value',
        hint: 'such a value never reaches a command: rename the member (a cluster file may give its host), or drop the placeholder from the templates; nothing was run',
      });
  }

  /** --dry-run: the argv each member's stop and start would run, quoted for display (nothing runs). */
  preview(members: readonly MemberSpec[], target: MemberTarget): string {
    const lines = members.flatMap((m) => [
      `  ${m.name}: stop:  ${displayArgv(this.argv(this.t.stop, m))}`,
      `  ${m.name}: start: ${displayArgv(this.argv(this.t.startByVersion?.[target.version] ?? this.t.start, m, target))}`,
    ]);
    return `commands (as they would run, each argument quoted for display):\n${lines.join('\n')}`;
  }

  private vars(
    m: MemberSpec,
    target?: MemberTarget,
    extra: Record<string, string> = {},
  ): Record<string, string> & Record<(typeof TEMPLATE_VARS)[number], string> {
    return {
      host: m.host ?? hostOf(m.endpoint),
      name: m.name,
      endpoint: m.endpoint,
      version: target?.version ?? '',
      bin: target?.binDir ?? '',
      ...extra,
    };
  }

  /** The argv of a template for a member, every value checked against its rule first. */
  argv(template: string, m: MemberSpec, target?: MemberTarget, extra: Record<string, string> = {}): string[] {
    const vars = this.vars(m, target, extra);
    return renderArgv(this.compile(template), (k) => {
      const v = vars[k];
      if (v === undefined) throw new TemplateError(`template ${template}: no value for {${k}}`);
      const p = valueProblem(k, v);
      if (p) throw new UsageError(`member ${shown(m.name)}: {${k}} ${shown(v)}: ${p}`, { code: 'unsafe_value', hint: 'nothing was run with it' });
      return v;
    });
  }

  /** Runs TEMPLATE for member M (on `target`; `extra` values; `feed`: stdin and its timeout); a failure throws unless `reject` is false. */
  private async run(
    template: string,
    m: MemberSpec,
    how: { target?: MemberTarget; reject?: boolean; extra?: Record<string, string>; feed?: { input: string; timeoutMs: number } } = {},
  ) {
    const { target, reject = true, extra = {}, feed } = how;
    const argv = this.argv(template, m, target, extra);
    const [file, ...args] = argv;
    if (file === undefined) throw new TemplateError(`template ${JSON.stringify(template)} is empty`);
    const io = feed ? { input: feed.input } : { stdin: 'ignore' as const };
    const r = await this.exec(file, args, { reject: false, timeout: feed?.timeoutMs ?? this.timeoutMs, ...io, env: this.env, extendEnv: false });
    if (reject && r.exitCode !== 0) {
      const why = r.timedOut ? `timed out after ${this.timeoutMs} ms` : r.exitCode === undefined ? (r.originalMessage ?? 'did not run') : `exit ${r.exitCode}`;
      const last = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      throw new Error(`\`${displayArgv(argv)}\` failed (${why})${last ? `: ${last}` : ''}`);
    }
    return Object.assign(r, { argv });
  }

  /** Runs the space template on the member's host and reads its du and df output (need: the data dir + 10% + 64 MiB). */
  private async measureSpace(m: MemberSpec, template: string): Promise<BackupSpace & { host: string }> {
    const r = await this.run(template, m);
    let got;
    try {
      got = parseSpaceReport(String(r.stdout ?? ''));
    } catch (err) {
      throw new Error(`the space template's output (\`${displayArgv(r.argv)}\`) cannot be read: ${(err as Error).message}`);
    }
    const host = this.vars(m).host;
    const needed = backupNeeds(got.dataBytes);
    return { host, dest: `${host}:${got.mount}`, dataDir: `${host}:${got.dataDir}`, dataBytes: got.dataBytes, needed, free: got.free, ok: got.free >= needed };
  }

  /**
   * The stage template on the member's host; its output must name the staged binary's version
   * (`etcd Version: X`, as `etcd --version` prints it) and X must be of the hop's minor.
   */
  private async runStage(m: MemberSpec, target: MemberTarget, template: string): Promise<string> {
    const r = await this.run(template, m, { target });
    const out = String(r.stdout ?? '');
    const v = /etcd Version:\s*(\S+)/.exec(out)?.[1];
    if (!v)
      throw new Error(
        `\`${displayArgv(r.argv)}\` printed no "etcd Version:" line: the stage template must end with the staged binary's --version (e.g. … && ssh {host} {bin}/etcd --version), so the binary is checked before anything stops`,
      );
    if (!v.startsWith(`${target.version}.`) && v !== target.version)
      throw new Error(
        `\`${displayArgv(r.argv)}\`: the staged etcd is ${v}, not ${target.version}.x: the hop to ${target.version} needs a ${target.version} binary`,
      );
    return `staged etcd ${v} (\`${displayArgv(r.argv)}\`)`;
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
    const r = await this.run(this.t.running, m, { reject: false });
    if (r.exitCode === 0) return true;
    if (r.exitCode === 255 || r.timedOut || r.exitCode === undefined) {
      const why = r.timedOut
        ? `timed out after ${this.timeoutMs} ms`
        : r.exitCode === 255
          ? 'exit 255: could not reach the host'
          : (r.originalMessage ?? 'did not run');
      const last = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      throw new Error(`cannot tell whether ${m.name} runs: \`${displayArgv(r.argv)}\` failed (${why})${last ? `: ${last}` : ''}`);
    }
    return false;
  }

  async start(m: MemberSpec, target: MemberTarget): Promise<void> {
    await this.run(this.t.startByVersion?.[target.version] ?? this.t.start, m, { target });
    this.versions.set(m.name, target);
  }

  /** The member's v2 data as the operator's v2-size template prints it (its first number); undefined without one. */
  async v2DataBytes(m: MemberSpec): Promise<number | undefined> {
    if (!this.t.v2Size) return undefined;
    const r = await this.run(this.t.v2Size, m);
    const n = Number(String(r.stdout).trim().split(/\s+/)[0]);
    return Number.isFinite(n) ? n : undefined;
  }

  /** The member's v2 store measured on its host where the driver reaches it (the trial template, or this machine): host-script.ts. */
  hostV2Size(m: MemberSpec): Promise<V2SizeRead> {
    return hostV2Size(this, m, { timeoutMs: this.timeoutMs, reached: Boolean(this.t.trial || onThisHost(m.endpoint)) });
  }

  /** Whether the v2 size can be measured on the member's host (a v2-size template, or a way onto the host). */
  measuresV2(m: MemberSpec): boolean {
    return Boolean(this.t.v2Size || this.t.trial || onThisHost(m.endpoint));
  }

  /** The trial template with `script` on its standard input (`sh -s` on the member's host). */
  private async shell(template: string, m: MemberSpec, script: string, timeoutMs: number): Promise<HostShellResult> {
    const r = await this.run(template, m, { reject: false, feed: { input: script, timeoutMs } });
    const stderr = String(r.stderr ?? '');
    const failed = r.timedOut
      ? `\`${displayArgv(r.argv)}\` timed out after ${timeoutMs} ms`
      : r.exitCode === undefined || r.exitCode === 255 || r.exitCode === 127
        ? `\`${displayArgv(r.argv)}\` failed (${r.exitCode === undefined ? (r.originalMessage ?? 'did not run') : `exit ${r.exitCode}`})${stderr.trim() ? `: ${stderr.trim().split('\n').pop()}` : ''}`
        : undefined;
    return { stdout: String(r.stdout ?? ''), stderr, exitCode: r.exitCode, ...(failed ? { failed } : {}) };
  }

  /**
   * The running member's settings, read on its host (the process listening on its client port: its
   * command line, ETCD_* environment, working directory, user and the config file it names); the
   * config template's output, where given, is the config file it will start {version} with.
   */
  private async readSettings(m: MemberSpec, target: MemberTarget, reads?: SettingsReads): Promise<StartSettings | { why: string }> {
    const given = this.t.binByVersion?.[target.version] ?? (target.binDir ? `${target.binDir}/etcd` : undefined);
    const host = this.vars(m).host;
    // The read script's output is the same for every target: once per member in a round of reads.
    const shell = (script: string) => sharedRead(reads, `proc\0${m.name}`, () => this.hostShell(m, script, this.timeoutMs));
    const read = await readRunningSettings(shell, m.endpoint, given ?? '', host, target.version, this.programAt);
    // (a program of the driver's own, not etcd: its settings are its command line's, no template's)
    if ('why' in read || read.capabilities) return read;
    if (this.t.settings && target.version) {
      // what the start on this version runs with (a per-version unit, manifest or flags file), not what runs now (no version: that)
      const given = await sharedRead(reads, `settings\0${m.name}\0${target.version}`, () => this.versionSettings(m, target));
      if ('why' in given) return given;
      Object.assign(read, given);
      // the config file those settings name, read there (the running process's may be another)
      const file = configFileOf(given.args, given.env);
      delete read.config;
      if (file) {
        const r = await readHostFile((script) => this.hostShell(m, script, this.timeoutMs), file);
        if ('why' in r) return { why: `${given.from.args} names the config file ${file}, which cannot be read on ${host}: ${r.why}` };
        read.config = { file: `${file} on ${host}`, text: r.text };
      }
    }
    // (a rolling restart on the member's own version: the binary it runs now)
    const bin = given ?? (target.running && read.exe ? read.exe : undefined);
    if (bin && !given) read.program = [bin];
    // (settings read without the target's path still feed the rules; the trial says what is missing)
    const found = bin
      ? read
      : {
          ...read,
          program: [],
          noProgram: `the path of the ${target.version} binary on the hosts is not known (--target-bin ${target.version}=DIR, the path on the hosts; or bins in the systemd preset)`,
        };
    if (!this.t.config) return found;
    const c = await sharedRead(reads, `config\0${m.name}\0${target.version}`, () => this.readConfig(m, target));
    return c ? { ...found, config: { file: `${c.file} on ${host}`, text: c.text } } : found;
  }

  /** The settings template's output for `target` (start-settings.ts reads it): the clone's members start with exactly these (kv/rehearsal). */
  async versionSettings(m: MemberSpec, target: MemberTarget): Promise<Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string }> {
    const r = await this.run(this.t.settingsByVersion?.[target.version] ?? this.t.settings!, m, { target, reject: false });
    const shown = `the settings template for ${target.version} (\`${displayArgv(r.argv)}\`)`;
    if (r.exitCode !== 0)
      return { why: `${shown} failed (exit ${r.exitCode ?? '?'})${String(r.stderr ?? '').trim() ? `: ${String(r.stderr).trim().split('\n').pop()}` : ''}` };
    return settingsOutput(String(r.stdout ?? ''), shown, (file) => readHostFile((script) => this.hostShell(m, script, this.timeoutMs), file));
  }

  /** The etcd binary on the hosts for a minor, as the cluster file's `bins:` (or a systemd preset's bins) names it. */
  hostBinary(version: string): string | undefined {
    return this.t.binByVersion?.[version];
  }

  /** `BIN --version` on the member's host, through hostShell (the binary the start template's {bin} names). */
  async binaryVersion(m: MemberSpec, target: MemberTarget): Promise<{ version: string } | { why: string }> {
    const bin = this.t.binByVersion?.[target.version] ?? (target.binDir ? `${target.binDir}/etcd` : undefined);
    if (!bin) return { why: `the path of the ${target.version} binary on the hosts is not known` };
    const r = await this.hostShell(m, `${shellWord(bin)} --version 2>&1 | sed -n 's/^etcd Version: //p'\n`, this.timeoutMs);
    if (r.failed) return { why: r.failed };
    const v = r.stdout.trim().split('\n')[0]?.trim();
    return v ? { version: v } : { why: `${bin} --version on ${this.vars(m).host} printed no "etcd Version:"` };
  }

  /** The argv that runs a script given on its input on the member's host (the trial template), if any: the rehearsal's fetch. */
  reach = (m: MemberSpec): string[] | undefined => (this.t.trial ? this.argv(this.t.trial, m) : undefined);

  /** Whether the member's host is this machine and no template stands between (the trial's scratch dir and ports are chosen here). */
  runsHere(m: MemberSpec): boolean {
    return !this.t.trial && onThisHost(m.endpoint);
  }

  /** The config template's output; the file is the last absolute path in its argv (else the command). */
  async readConfig(m: MemberSpec, target: MemberTarget): Promise<{ file: string; text: string } | undefined> {
    if (!this.t.config) return undefined;
    const r = await this.run(this.t.config, m, { target });
    const file = [...r.argv].reverse().find((a) => a.startsWith('/')) ?? `\`${displayArgv(r.argv)}\``;
    return { file, text: String(r.stdout ?? '') };
  }

  /** --on-failure rollback: the restoreBackup template ({run}: the {run} of the copy it puts back, journal/copies.ts). */
  get restoreBackup(): ((m: MemberSpec, dest: string, run: string) => Promise<string>) | undefined {
    return this.copyStep(this.t.restoreBackup);
  }

  /** The dropBackup template ({run}): the backup template's copy removed once its hop is done. */
  get dropBackup(): ((m: MemberSpec, dest: string, run: string) => Promise<string>) | undefined {
    return this.copyStep(this.t.dropBackup);
  }

  /** A template run on a data-dir copy ({run}: the copy's run id), or undefined without the template. */
  private copyStep(tpl: string | undefined): ((m: MemberSpec, dest: string, run: string) => Promise<string>) | undefined {
    return tpl ? async (m, _dest, run) => `\`${displayArgv((await this.run(tpl, m, { extra: { run } })).argv)}\` done` : undefined;
  }

  /** The restore template for the restore's target minor (restoreByVersion), else the one restore template. */
  private restoreTemplate(r: RestoreRequest): string | undefined {
    return this.t.restoreByVersion?.[minor(r.target.version) ?? r.target.version] ?? this.t.restore;
  }

  /** kv restore: the restoreCheck template, when given (reachable host, data dir there). */
  async checkRestore(m: MemberSpec, r: RestoreRequest): Promise<string> {
    const tpl = this.restoreTemplate(r);
    if (!tpl) throw new Error('the driver has no restore template (driver.restore in the cluster file, or --restore-cmd)');
    // 3.6's etcdctl has no `snapshot restore` (etcdutl took it over in 3.5): refused before any stop, not on the host.
    if (/\betcdctl\b[^&;|]*\bsnapshot\s+restore\b/.test(tpl) && compareMinor(minor(r.target.version) ?? r.target.version, '3.6') >= 0) {
      throw new Error(
        `member ${m.name}: the restore template runs etcdctl snapshot restore, which etcd ${r.target.version}'s etcdctl does not have: write etcdutl snapshot restore (the same flags) in driver.restore or --restore-cmd`,
      );
    }
    // The restore's own values are checked too (before any stop), though the check does not run it.
    this.argv(tpl, m, r.target, restoreVars(r));
    if (!this.t.restoreCheck) return 'no restore check template: the host and data dir were not checked';
    const c = await this.run(this.t.restoreCheck, m, { target: r.target, extra: restoreVars(r) });
    return `\`${displayArgv(c.argv)}\` ok`;
  }

  async restoreData(m: MemberSpec, r: RestoreRequest): Promise<string> {
    const r2 = await this.run(this.restoreTemplate(r)!, m, { target: r.target, extra: restoreVars(r) });
    const out = String(r2.stdout ?? '')
      .trim()
      .split('\n')
      .pop();
    return `\`${displayArgv(r2.argv)}\` done${out ? `: ${out.slice(0, 160)}` : ''}`;
  }

  /** `ls -d` of the paths that matter, on the member's host (the onHost prefix): each path one argument. */
  private layoutTemplate(): string {
    return `${this.t.onHost ?? ''} ls -d {dataExists} {dataWal} {dataDb}`;
  }

  /** `ls -d` of the paths that matter, on the member's host (the onHost prefix); exit 2 only says one is missing. */
  private async layout(m: MemberSpec, dataDir: string): Promise<DataLayout> {
    const words = this.argv(dataDir, m);
    const dir = words[0];
    if (dir === undefined || words.length !== 1)
      throw new TemplateError(`the data-dir template ${JSON.stringify(dataDir)} is one path, not ${words.length} words (quote a path with blanks)`);
    const paths = { exists: `${dir}/member`, wal: `${dir}/member/wal`, db: `${dir}/member/snap/db` };
    const r = await this.run(this.layoutTemplate(), m, { reject: false, extra: { dataExists: paths.exists, dataWal: paths.wal, dataDb: paths.db } });
    if (r.exitCode !== 0 && r.exitCode !== 2) {
      const last = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      throw new Error(`\`${displayArgv(r.argv)}\` failed (${r.timedOut ? 'timed out' : `exit ${r.exitCode ?? '?'}`})${last ? `: ${last}` : ''}`);
    }
    const found = new Set(
      String(r.stdout ?? '')
        .split('\n')
        .map((l) => l.trim()),
    );
    return { dir, exists: found.has(paths.exists), wal: found.has(paths.wal), db: found.has(paths.db) };
  }

  current = (m: MemberSpec): MemberTarget | undefined => this.versions.get(m.name);

  private cloneOf: CloneOf | { why: string } = { why: 'the members were not looked at for a clone (kv/rehearsal/clone-find.ts)' };
  /** What kv/rehearsal/clone-find.ts found (setClone): the members' processes here, their data dirs, their record. */
  clonable = (): CloneOf | { why: string } => this.cloneOf;
  setClone = (c: CloneOf | { why: string }): void => void (this.cloneOf = c);
  /** How its clone is found and run (kv/rehearsal/command-clone.ts), given where it is made; a getter, so through traced() its reads are said. */
  cloneBy?: (self: CommandDriver) => Cloning;
  get cloning(): Cloning | undefined {
    return this.cloneBy?.(this);
  }
  /** Its dirs on its host, read while it runs (the trial template's host, or here), and its WAL mark there: host-script.ts. */
  private readonly onHost = new HostData(
    (m) => this.runningSettings(m),
    (m, script) => this.hostShell(m, script, this.timeoutMs),
    () => Boolean(this.t.trial),
  );
  hostDataDirs = async (m: MemberSpec): Promise<MemberDirs | undefined> => (this.t.trial || onThisHost(m.endpoint) ? this.onHost.dirs(m) : undefined);
  learnDataDirs = async (m: MemberSpec): Promise<void> => void (await this.hostDataDirs(m));
  /** Where opsctl reads them on this machine: the clone's (clone-find.ts), or a member's own read here (no trial template). */
  dataDirs = async (m: MemberSpec): Promise<MemberDirs | undefined> => {
    const cloned = 'dirs' in this.cloneOf ? this.cloneOf.dirs?.[m.name] : undefined;
    return cloned || this.t.trial || !onThisHost(m.endpoint) ? cloned : this.onHost.dirs(m);
  };
  hostWalMark = (m: MemberSpec): Promise<WalMark | { why: string }> => this.onHost.walMark(m);
  /** The member's process as it runs now, read from /proc on its host (its PID, binary, command line, environment). */
  runningSettings(m: MemberSpec) {
    return readRunningSettings((s) => this.hostShell(m, s, this.timeoutMs), m.endpoint, '', this.vars(m).host, 'any', this.programAt);
  }
}

/** The restore template's variables: {snapshot} {peer} {cluster} {token} {run} ({name}, {host}, {version}, {bin} as everywhere). */
function restoreVars(r: RestoreRequest): Record<string, string> {
  return { snapshot: r.snapshot, peer: r.peerUrl, cluster: r.initialCluster, token: r.token, run: r.run };
}

/**
 * `driver: {type: container, engine: podman, images: {"3.6": …}}`: members that are containers of the etcd
 * image (podman or docker, on this machine or behind an `ssh {host}` prefix). A hop is: stop the container,
 * keep it under a new name (the way back), create the next one from the hop's image with the same settings
 * (read from the engine: command line, environment, mounts, network, user, restart policy, limits), start it.
 *
 * Every start is safe to run again (a resume after kill -9 at any point), because it reads the engine's own
 * state first: the member's container on the target image already (created, not started): started; the
 * container of another image: kept, the next created from its settings; no container of that name (killed
 * after the keep): the newest kept one's settings. Going down a minor (kv rollback, kv downgrade) the kept
 * container of the target's image comes back under the member's name, as it was. The kept containers are
 * named CONTAINER.opsctl-kept-WHEN-ID (WHEN: the UTC second it was kept, as run ids begin; ID: its own short
 * id): `kv backups prune` removes those its pruned runs kept (prune.ts). The data dir is copied after each
 * stop and put back by --on-failure rollback as backup.ts says.
 */
import type { ContainerSpec, MemberSpec } from '../cluster/cluster-file.js';
import { compareMinor, minor } from '../cluster/parse.js';
import type { CloneOf, Cloning, DriverProof, KeptByHops, MemberDirs, MemberDriver, MemberTarget, RestoreRequest, SettingsReads } from '../drivers/driver.js';
import { ELSEWHERE, sharedRead } from '../drivers/driver.js';
import { configFileOf, type StartSettings } from '../drivers/start-settings.js';
import { Engine, EngineError, failure } from './engine.js';
import { createArgs, mountOf, ownEnv, policyRestarts, type ContainerSettings } from './settings.js';
import { proveStarts } from './proof.js';
import { backupData, backupSpace, copySize, dropData, putBackData, stopForGood } from './backup.js';
import { abandonRestore, checkRestore, prepareRestore, restoreData } from './restore.js';
import { KEPT, keptName, keptOf, removeKept } from './prune.js';
import type { ContainerCloneRecord } from './clone.js';
import { engineDirs, hostDirs } from './dirs.js';
import { hostWalMark } from '../drivers/host-script.js';
import { walDirOf } from '../wal/v2-data.js';
import type { WalMark } from '../wal/wal-mark.js';

export { KEPT } from './prune.js';

type Exec = typeof import('execa').execa;

export class ContainerDriver implements MemberDriver {
  readonly type = 'container';
  readonly place = ELSEWHERE;
  readonly engine: Engine;
  private readonly versions = new Map<string, MemberTarget>();

  constructor(
    readonly spec: ContainerSpec,
    private readonly exec: Exec,
    private readonly env: NodeJS.ProcessEnv,
    /** The crash-point seam (kv/drivers/traced.ts): the engine calls inside a start that change a member, said before and after. */
    private readonly trace?: (line: string) => void,
    /** Inside the rehearsal's clone (clone.ts): its tag names each member's container there, and what each runs at first. */
    private readonly clone?: ContainerCloneRecord,
  ) {
    this.engine = new Engine(spec.engine ?? 'podman', spec.onHost, exec, env);
  }

  /** The member's container: the cluster file's `container:`, else etcd-NAME. */
  containerOf(m: MemberSpec): string {
    const own = m.container ?? `etcd-${m.name}`;
    return this.clone ? `${own}.${this.clone.tag}` : own;
  }

  /** The image of a minor, as the cluster file names it. */
  imageOf(version: string): string | undefined {
    return this.spec.images[minor(version) ?? version] ?? this.spec.images[version];
  }

  /** The minor whose image a container runs (by name, else by id), where the cluster file names it. */
  private async versionOf(m: MemberSpec, c: ContainerSettings): Promise<string | undefined> {
    for (const [v, image] of Object.entries(this.spec.images)) {
      if (image === c.image) return v;
      const id = (await this.engine.image(m, image))?.id;
      if (id && id === c.imageId) return v;
    }
    return undefined;
  }

  private async sameImage(m: MemberSpec, c: ContainerSettings, image: string): Promise<boolean> {
    if (c.image === image) return true;
    const id = (await this.engine.image(m, image))?.id;
    return Boolean(id && id === c.imageId);
  }

  /** The member's kept containers, newest first. */
  async kept(m: MemberSpec): Promise<ContainerSettings[]> {
    const named = await this.engine.containersNamed(m, `${this.containerOf(m)}${KEPT}`);
    const all = await Promise.all(named.map((n) => this.engine.inspect(m, n.name)));
    return all.filter((c): c is ContainerSettings => Boolean(c)).sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
  }

  /** The member's container as it is now, else (a start killed after the keep) its newest kept one. */
  async settingsSource(m: MemberSpec): Promise<ContainerSettings | undefined> {
    return (await this.engine.inspect(m, this.containerOf(m))) ?? (await this.kept(m))[0];
  }

  private point(words: string, m: MemberSpec, at: 'before' | 'changed'): void {
    this.trace?.(`[kv] point: ${words} ${m.name}${at === 'changed' ? ' (changes)' : ''}`);
  }

  /** An engine call that changes the member, as a crash point of its own (before, and after with "(changes)"). */
  private async change(m: MemberSpec, what: string, args: string[]): Promise<void> {
    this.point(`before container-${what}`, m, 'before');
    await this.engine.must(m, args);
    this.point(`after container-${what}`, m, 'changed');
  }

  /**
   * The member's container stopped by hand, so that it stays stopped: one that runs is stopped; one with a restart
   * policy (a start that fails is started again and again) is stopped even between two of its starts (a stop holds
   * it: the engine restarts none stopped by hand) and looked at again a moment later (backup.ts, stopForGood); one
   * with no policy that does not run is left as it is.
   */
  async stop(m: MemberSpec): Promise<void> {
    const c = await this.engine.inspect(m, this.containerOf(m));
    if (c && !c.running && !c.restarting && !c.restart) this.stoppedHere.add(c.id);
    else if (c?.restart) await stopForGood(this, m, 60);
    else if (c) {
      await this.engine.must(m, this.engine.stopArgs(c.name, 60));
      this.stoppedHere.add(c.id);
    }
  }

  /** The containers this process stopped by hand (by id): their restart policy starts them no more. */
  private readonly stoppedHere = new Set<string>();

  /** A container stopped by hand (here, or by the put-back's stopForGood), by id. */
  heldStopped(id: string): void {
    this.stoppedHere.add(id);
  }

  /**
   * The last resort after a stop timed out (the flows' wait for the process to be gone): SIGKILL to the
   * container's process, then a `stop` of no grace, which marks it stopped by hand so its
   * restart policy does not start it again. Neither fails on a container that does not run (any more).
   */
  async kill(m: MemberSpec): Promise<void> {
    const name = this.containerOf(m);
    await this.engine.run(m, ['kill', '--signal', 'KILL', name]);
    const r = await this.engine.run(m, this.engine.stopArgs(name, 0));
    const c = await this.engine.inspect(m, name);
    if (r.exitCode !== 0 && c?.running) throw new EngineError(failure(r, 120_000));
    if (c) this.stoppedHere.add(c.id);
  }

  /**
   * Whether the member's container runs, or will run again by itself: a start that fails, which its restart
   * policy starts again and again, is running until it is stopped by hand (stop, kill), whatever instant is looked at.
   */
  async isRunning(m: MemberSpec): Promise<boolean> {
    const c = await this.engine.inspect(m, this.containerOf(m));
    if (!c) return false;
    return c.running || (policyRestarts(c) && !this.stoppedHere.has(c.id));
  }

  /** A kept container's name: the member's, then KEPT, when it was kept and its own short id (unique; the id names it in every message). */
  private keptName(m: MemberSpec, c: ContainerSettings): string {
    return keptName(this.containerOf(m), c.id, new Date());
  }

  /** The member's host, as messages and the backups' records name it. */
  private hostOf(m: MemberSpec): string {
    return m.host ?? new URL(m.endpoint).hostname.replace(/^\[(.*)\]$/, '$1');
  }

  // The data-dir copy after each stop, its put-back, measure and removal (backup.ts); each its own {run}.
  // (properties, not methods: the upgrade calls some of them unbound)
  readonly backupDataDir = (m: MemberSpec, _dest: string, run: string): Promise<string> => backupData(this, m, run);
  readonly restoreBackup = (m: MemberSpec, _dest: string, run: string): Promise<string> => putBackData(this, m, run);
  readonly dropBackup = (m: MemberSpec, _dest: string, run: string): Promise<string> => dropData(this, m, run);
  readonly copySize = (m: MemberSpec, run: string) => copySize(this, m, run, this.hostOf(m));
  readonly backupSpace = (m: MemberSpec) => backupSpace(this, m, this.hostOf(m));
  /** The containers a hop kept (prune.ts), for `kv backups prune` to remove with their runs. */
  readonly keptByHops: KeptByHops = { list: (members) => keptOf(this, members), remove: (m, name) => removeKept(this, m, name) };

  // kv restore (restore.ts): each member's data built from the snapshot by the target image's tool beside its data, then put in place.
  readonly checkRestore = (m: MemberSpec, r: RestoreRequest): Promise<string> => checkRestore(this, m, r);
  readonly prepareRestore = (m: MemberSpec, r: RestoreRequest): Promise<void> => prepareRestore(this, m, r);
  readonly restoreData = (m: MemberSpec, r: RestoreRequest): Promise<string> => restoreData(this, m, r);
  readonly abandonRestore = (m: MemberSpec, r: RestoreRequest): Promise<void> => abandonRestore(this, m, r);

  /**
   * The member's data dir and WAL dir (its wal-dir, where it sets one) as paths on this machine, for the tools
   * opsctl runs here on its data (the just-in-time WAL check before a start): mapped through the mounts of the
   * container the driver starts next (its container, else its newest kept one), a volume's by its Mountpoint.
   * Undefined, said on the debug sink, where the engine may run on another machine or the dirs cannot be told.
   */
  async dataDirs(m: MemberSpec): Promise<MemberDirs | undefined> {
    const dirs = await hostDirs(this, m);
    if ('why' in dirs) {
      this.trace?.(`[kv] container ${m.name}: its data dirs are not read on this machine: ${dirs.why}`);
      return undefined;
    }
    return dirs;
  }

  /**
   * The mark of the member's WAL on its engine's host (kv/wal/wal-mark.ts), where opsctl does not read it here
   * (dataDirs: an engine behind driver.onHost, or elsewhere): the put-back's guard there too, read by `sh -s` on that host.
   */
  async hostWalMark(m: MemberSpec): Promise<WalMark | { why: string }> {
    const dirs = await engineDirs(this, m);
    if ('why' in dirs) return { why: `${m.name}'s WAL dir on its engine's host cannot be told: ${dirs.why}` };
    return hostWalMark(async (script) => {
      const r = await this.engine.host(m, ['sh', '-s'], 120_000, script);
      return {
        stdout: r.stdout,
        stderr: r.stderr,
        ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
        ...(r.exitCode === 0 ? {} : { failed: failure(r, 120_000) }),
      };
    }, walDirOf(dirs));
  }

  async start(m: MemberSpec, target: MemberTarget): Promise<void> {
    // (inside the clone, a member's first start makes its container from the cluster member's: clone.ts)
    const first = this.clone && !this.versions.has(m.name) ? await this.firstInClone(m) : undefined;
    this.lastStart.set(m.name, first ?? (await this.startOn(m, target)));
    this.versions.set(m.name, target);
  }

  private async firstInClone(m: MemberSpec): Promise<string | undefined> {
    const { firstCloneStart } = await import('./clone.js');
    return firstCloneStart(this, m, { own: m.container ?? `etcd-${m.name}`, clone: this.containerOf(m) });
  }

  /** What the last start of each member did (the engine calls, the containers named), for the step's record. */
  readonly lastStart = new Map<string, string>();

  private async startOn(m: MemberSpec, target: MemberTarget): Promise<string> {
    const name = this.containerOf(m);
    const image = this.imageOf(target.version);
    if (!image) throw new EngineError(`no image for ${target.version} in driver.images of the cluster file: add "${target.version}": IMAGE`);
    const cur = await this.engine.inspect(m, name);
    if (cur && (await this.sameImage(m, cur, image))) {
      if (cur.running) return `${name} (${image}) runs already`;
      this.stoppedHere.delete(cur.id);
      await this.change(m, 'start', ['start', name]);
      return `${name} (${image}) started`;
    }
    const kept = await this.kept(m);
    const from = cur ?? kept[0];
    if (!from)
      throw new EngineError(
        `member ${m.name}: the engine has no container ${name}, and none kept (${name}${KEPT}…): create it as it was, then run the same command`,
      );
    if (from.running) throw new EngineError(`member ${m.name}: ${from.name} still runs (${from.image}): it is stopped before its image changes`);
    const fromVersion = await this.versionOf(m, from);
    const said: string[] = [];
    if (cur) {
      // a policy that would start it again (a failed start's loop) is held first: a stop by hand holds
      if (cur.restart || cur.restarting) await stopForGood(this, m, 60);
      const keep = this.keptName(m, cur);
      await this.change(m, 'rename', ['rename', cur.name, keep]);
      said.push(`${cur.name} (${cur.image}) kept as ${keep}`);
    }
    // Going down a minor (a rollback, a downgrade): the kept container of the target's image, as it was.
    const down = fromVersion !== undefined && compareMinor(minor(target.version) ?? target.version, fromVersion) < 0;
    const back = down ? await this.findKept(m, kept, image) : undefined;
    if (back) {
      await this.change(m, 'rename', ['rename', back.name, name]);
      this.stoppedHere.delete(back.id);
      await this.change(m, 'start', ['start', name]);
      return [...said, `${back.name} (${image}) back as ${name} and started`].join('; ');
    }
    const oldImage = await this.engine.image(m, from.imageId || from.image);
    const args = createArgs({ settings: from, ...(oldImage ? { oldImage } : {}), name, image, member: m.name });
    await this.change(m, 'create', args);
    await this.change(m, 'start', ['start', name]);
    return [...said, `${name} created from ${image} with ${from.name}'s settings and started`].join('; ');
  }

  private async findKept(m: MemberSpec, kept: ContainerSettings[], image: string): Promise<ContainerSettings | undefined> {
    for (const k of kept) if (await this.sameImage(m, k, image)) return k;
    return undefined;
  }

  current(m: MemberSpec): MemberTarget | undefined {
    const first = this.clone?.members.find((x) => x.name === m.name);
    return this.versions.get(m.name) ?? (first ? { version: first.version, running: true } : undefined);
  }

  /** The image of a minor: what "the binary on the hosts" is for containers (its version asked by binaryVersion). */
  hostBinary(version: string): string | undefined {
    return this.imageOf(version);
  }

  /** The etcd of the image, asked its version on the member's host (`run --rm --network none IMAGE --version`). */
  async binaryVersion(m: MemberSpec, target: MemberTarget): Promise<{ version: string } | { why: string }> {
    const image = this.imageOf(target.version);
    if (!image) return { why: `no image for ${target.version} in driver.images` };
    const program = (await this.settingsSource(m).catch(() => undefined))?.argv[0] ?? '/usr/local/bin/etcd';
    const r = await this.engine.run(m, ['run', '--rm', '--network', 'none', '--entrypoint', program, image, '--version']);
    const v = /etcd Version:\s*(\S+)/.exec(r.stdout)?.[1];
    if (v) return { version: v };
    return { why: `${image}: \`${program} --version\` printed no "etcd Version:" (${r.stderr.trim().split('\n').pop() ?? `exit ${r.exitCode}`})` };
  }

  /** Before a hop's first stop: the hop's image is on every member's host (pulled where it is not) and its etcd is of the hop. */
  async stage(m: MemberSpec, target: MemberTarget): Promise<string> {
    const image = this.imageOf(target.version);
    if (!image) throw new EngineError(`no image for ${target.version} in driver.images of the cluster file`);
    if (!(await this.engine.image(m, image))) await this.engine.must(m, ['pull', image], 600_000);
    const v = await this.binaryVersion(m, target);
    if ('why' in v) throw new EngineError(v.why);
    if (minor(v.version) !== (minor(target.version) ?? target.version)) throw new EngineError(`${image} runs etcd ${v.version}, not ${target.version}.x`);
    return `${image}: etcd ${v.version}`;
  }

  /**
   * What the member's next start on `target` runs with: its container's command and ETCD_* environment as
   * the engine reports them (the next container is created with the same), and the config file they name,
   * read from the mount that holds it on the host.
   */
  async startSettings(m: MemberSpec, target: MemberTarget, reads?: SettingsReads): Promise<StartSettings | { why: string }> {
    const c = await sharedRead(reads, `container\0${m.name}`, () => this.settingsSource(m));
    if (!c) return { why: `the engine has no container ${this.containerOf(m)} (member ${m.name}: driver.container in the cluster file names it)` };
    const env = Object.fromEntries(Object.entries(ownEnv(c, undefined)).filter(([k]) => /^(ETCD_|GO)/.test(k)));
    const where = `container ${c.name} (${this.engine.program} inspect)`;
    const image = this.imageOf(target.version);
    const s: StartSettings = {
      program: c.argv.slice(0, 1),
      args: c.argv.slice(1),
      env,
      ...(c.workdir ? { cwd: c.workdir } : {}),
      from: { args: `${where}: its command`, env: `${where}: its environment` },
      ...(image ? {} : { noProgram: `no image for ${target.version} in driver.images of the cluster file` }),
    };
    const file = configFileOf(s.args, s.env);
    if (file) {
      const at = mountOf(c, file);
      if (!at) return { ...s, noProgram: `the config file ${file} is not on a mount of ${c.name}: opsctl cannot read it from the host` };
      const path = at.rest ? `${at.mount.hostPath}/${at.rest}` : at.mount.hostPath;
      const r = await this.engine.host(m, ['cat', '--', path]);
      if (r.exitCode !== 0) return { why: `${c.name}'s config file ${file} (${path} on its host) cannot be read: ${r.stderr.trim()}` };
      s.config = { file: `${file} in ${c.name}`, text: r.stdout };
    }
    return s;
  }

  // The rehearsal's clone (clone.ts): podman's members here, made again under names of their own in the clone.
  private cloneOf: CloneOf | { why: string } = { why: 'the members were not looked at for a clone (kv/containers/clone.ts)' };
  /** What the last look for a clone found (lookForClone). */
  clonable = (): CloneOf | { why: string } => this.cloneOf;
  /**
   * The clone: the members looked at (each container running on the host's network, podman's here, as root;
   * clones of an opsctl that is gone removed first); inside it, the clone's containers from the record; after
   * it, every container of this opsctl's clone removed.
   */
  readonly cloning: Cloning = {
    look: async (members) => {
      const { findContainerClone } = await import('./clone.js');
      this.looked = members;
      // (an engine that fails to answer: no clone, said on the plan; the run's own checks meet it again)
      this.cloneOf = await findContainerClone(this, members, process.getuid?.()).catch((err: Error) => {
        if (!(err instanceof EngineError)) throw err;
        return { why: `the members' containers could not be looked at: ${err.message}` };
      });
    },
    inClone: async (dataDir) => {
      const { readContainerClone } = await import('./clone.js');
      return new ContainerDriver(this.spec, this.exec, this.env, this.trace, await readContainerClone(dataDir));
    },
    drop: async () => {
      const { dropClone } = await import('./clone.js');
      return dropClone(this, this.looked);
    },
  };
  private looked: readonly MemberSpec[] = [];

  /** The proof (proof.ts): each target's image on one copy of the member's data, no network of its own. */
  proveStarts(m: MemberSpec, targets: MemberTarget[], timeoutS: number, on: 'copy' | 'empty' = 'copy'): Promise<DriverProof[]> {
    return proveStarts(this, m, targets, timeoutS, on);
  }

  /** --dry-run: what each member's hop runs. */
  preview(members: readonly MemberSpec[], target: MemberTarget): string {
    const image = this.imageOf(target.version) ?? `(no image for ${target.version})`;
    const lines = members.map((m) => {
      const n = this.containerOf(m);
      return `  ${m.name}: ${this.engine.program} stop ${n}; rename ${n} ${n}${KEPT}WHEN-ID; create --name ${n} (its settings) ${image}; start ${n}`;
    });
    return `containers (as they would run):\n${lines.join('\n')}`;
  }
}

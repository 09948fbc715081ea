import type { MemberSpec } from '../cluster/cluster-file.js';
import type { ProgramCapabilities, StartSettings } from './start-settings.js';

export { capabilitiesOf, ETCD_PROGRAM, type ProgramCapabilities } from './start-settings.js';
import type { MemberDirs } from '../wal/v2-data.js';
import type { WalMark } from '../wal/wal-mark.js';

export type { MemberDirs } from '../wal/v2-data.js';

/** A data-dir copy's size on its host: bytes as `du -sB1` counts them, or why it is not known (host-copy.ts). */
export type CopySize = { bytes: number } | { why: string };

/** What a script run on a member's host printed (`failed`: it could not be run, or did not finish). */
export interface HostShellResult {
  stdout: string;
  stderr: string;
  exitCode?: number;
  failed?: string;
}

/** What a member runs: a simulated minor version, or a directory with real etcd binaries. */
export interface MemberTarget {
  version: string;
  binDir?: string;
  /** The member's own running binary (a rolling restart on its version with no binary given): the trial reads it from /proc. */
  running?: boolean;
  /**
   * Settings for this one start only (kv upgrade --fix-v2store: `snapshot-count: 1`): the local
   * driver writes them into the member's config file (its original kept beside it and put back at
   * the next start without them), or adds them as flags when the member has no config file.
   */
  settings?: Record<string, string>;
}

/** What a member's data directory holds (the v2-only check before 3.3: member/wal without member/snap/db). */
export interface DataLayout {
  dir: string;
  /** The member's own WAL dir (wal-dir), where it sets one. */
  walDir?: string;
  /** The data dir has a member/ directory at all. */
  exists: boolean;
  /** member/wal (or its own WAL dir): the raft log (v2 data lives in its snapshots). */
  wal: boolean;
  /** member/snap/db: the v3 database. */
  db: boolean;
}

/** What a clone of the members is made of (MemberDriver.clonable). */
export interface CloneOf {
  /** Paths under opsctl's data directory that hold everything the driver keeps for the members. */
  paths: string[];
  /** The members' processes, paused together while they are copied. */
  pause?: number[];
  /** What the members keep outside opsctl's data directory (data dirs, WAL dirs): copied, each copy mounted over its path. */
  outside?: string[];
  /** Files written into the clone's copy of opsctl's data directory (relative path → text): what the clone's run reads of the cluster. */
  files?: Record<string, string>;
  /** Addresses of this host the members listen on besides loopback: given to the clone's own loopback. */
  addresses?: string[];
  /**
   * The members' processes are a container engine's (its monitor starts and reaps them): the clone's run has no
   * PID namespace of its own, so the engine outlives it and removes them cleanly; the driver removes them after the run (dropClone).
   */
  engineRuns?: boolean;
  /** The clone's run is started in the operator's working directory (the driver's templates may name relative paths). */
  operatorCwd?: boolean;
  /** Each member's data dir and WAL dir on this machine, as its process runs them (the just-in-time check reads them). */
  dirs?: Record<string, { dataDir: string; walDir?: string }>;
  /** Members on other hosts: each one's files brought here under one pause of every member (kv/rehearsal/fetch.ts). */
  fetch?: Array<{ member: string; argv: readonly string[]; pid: number; paths: readonly string[] }>;
  /** The paths their copies are mounted over in the clone (made on this machine for the clone's run where missing, removed after). */
  mountPoints?: string[];
  /** (fetch) The bytes the copy brings, as the hosts measured them (--rehearsal-max-copy holds them). */
  bytes?: number;
}

/**
 * How opsctl controls member processes. What a flow needs to know of the members' program it asks
 * here (capabilities, etcdFromDir), never which driver or sandbox it is.
 */
export interface MemberDriver {
  readonly type: 'local' | 'command' | 'container';
  /** What a flow may do with the members' program (capabilitiesOf: etcd's when absent). */
  readonly capabilities?: ProgramCapabilities;
  /** Where the members run, as a flow needs to know it (placeOf). */
  readonly place?: MemberPlace;
  /**
   * Every start runs etcd from a directory of binaries that must be known (MemberTarget.binDir: from
   * --target-bin, the release cache or the journal): the sandbox from --etcd-bin. Absent: the driver's
   * start template finds the binary ({version}), or the program needs none (ProgramCapabilities.releases).
   */
  readonly etcdFromDir?: boolean;
  /**
   * What a clone of the members is made of (kv/rehearsal): the paths under opsctl's data directory that
   * hold everything the driver keeps for them (data dirs, config files, records), so that a copy mounted
   * over it starts exactly as the members do, and the processes to pause together while they are copied (a
   * crash-consistent copy of every member at one instant); or why they cannot be cloned here. Absent: why is the driver's kind.
   * `outside`: what the members keep outside opsctl's data directory (a WAL dir of their own, wal-dir): the
   * clone copies it too and mounts the copy over its path, so no clone member reaches a cluster member's files.
   */
  clonable?(): CloneOf | { why: string };
  /** Where the driver finds its clone by looking at the members (clonable() answers it after look): how, and its members inside the clone. */
  readonly cloning?: Cloning;
  /** The members checked before any template uses their names and hosts (`where`: the file or flags they came from); throws naming the problem. */
  checkMembers?(members: readonly MemberSpec[], where: string): void;
  /** What the driver's hops kept of each member besides its backups (the container driver: the old containers), pruned with their runs. */
  readonly keptByHops?: KeptByHops;
  /** Ask the member to stop (gracefully). */
  stop(m: MemberSpec): Promise<void>;
  /** Whether the member's process still exists (not only whether its port answers). */
  isRunning(m: MemberSpec): Promise<boolean>;
  /** Start the member on `target`. */
  start(m: MemberSpec, target: MemberTarget): Promise<void>;
  /**
   * The version of the etcd binary a start on `target` would run, asked where the member runs (right
   * before its start: a wrong or missing binary is refused, never started); `why` when it cannot be asked there.
   */
  binaryVersion?(m: MemberSpec, target: MemberTarget): Promise<{ version: string } | { why: string }>;
  /** The etcd binary on the members' hosts for a minor, where the cluster file names it (`bins:`, a systemd preset's bins). */
  hostBinary?(version: string): string | undefined;
  /** Last resort after a stop timed out (local: SIGKILL). */
  kill?(m: MemberSpec): Promise<void>;
  /** Bytes of v2 data, when the driver can tell (for --settle auto): the local driver's newest snapshot file, the command driver's v2-size template. */
  v2DataBytes?(m: MemberSpec): Promise<number | undefined>;
  /** The v2 store measured on the member's host, through hostShell (its newest v2 snapshot file, else its WAL's v2 writes), or why not. */
  hostV2Size?(m: MemberSpec): Promise<V2SizeRead>;
  /**
   * Backs up a stopped member's data dir (the seed: back up every data dir): the local driver copies
   * it to `dest`, the command driver runs its backup template with {run}. Returns the journal detail.
   */
  backupDataDir?(m: MemberSpec, dest: string, run: string): Promise<string>;
  /**
   * The copy backupDataDir made on the member's host under {run}, measured there as `du` counts it
   * (host-copy.ts), or why not. Absent: the driver's copies are not on the hosts (the local driver's are
   * under opsctl's data directory, measured there).
   */
  copySize?(m: MemberSpec, run: string): Promise<CopySize & { path?: string }>;
  /** Stages the target binary on the member's host and checks its version (before a hop's first stop); the detail line. */
  stage?(m: MemberSpec, target: MemberTarget): Promise<string>;
  /**
   * --on-failure rollback: a stopped member's data dir back from the backup taken after its stop
   * (`dest`/{run} as in backupDataDir), the current dir kept beside it. Returns the journal detail.
   */
  restoreBackup?(m: MemberSpec, dest: string, run: string): Promise<string>;
  /**
   * The backup taken after a member's stop removed, once its hop is done (`dest`/{run} as in
   * backupDataDir): the hop's verified restore point is the way back then. Returns the journal detail.
   */
  dropBackup?(m: MemberSpec, dest: string, run: string): Promise<string>;
  /**
   * The config file (etcd --config-file, YAML) the member will start with on `target`, and where it
   * is, for the 3.3 configuration check; undefined when the member has none the driver knows of.
   */
  readConfig?(m: MemberSpec, target: MemberTarget): Promise<{ file: string; text: string } | undefined>;
  /** The member's data dir as it is on disk; absent when the driver does not know the data dir. */
  dataLayout?(m: MemberSpec): Promise<DataLayout>;
  /**
   * The member's data dir and WAL dir, read from the settings it starts with (the local driver: its config
   * file), for the tools opsctl runs on this machine on its data; undefined when the driver does not know them.
   */
  dataDirs?(m: MemberSpec): Promise<MemberDirs | undefined>;
  /** What the driver needs to find the member's data while it is down, read while it runs (the cycle asks before a stop). */
  learnDataDirs?(m: MemberSpec): Promise<void>;
  /** The member's data and WAL dirs on its host, read from its running process there (what etcdutl reads there before any trial ran). */
  hostDataDirs?(m: MemberSpec): Promise<MemberDirs | undefined>;
  /** The mark of the member's WAL on its host, where its data is not read here (kv/wal/wal-mark.ts: the put-back's guard). */
  hostWalMark?(m: MemberSpec): Promise<WalMark | { why: string }>;
  /** What the member runs now, as the driver knows it. */
  current(m: MemberSpec): MemberTarget | undefined;
  /**
   * The proof made by the driver itself, where its members' program is not a binary on the host (containers:
   * each target's image started with the member's own settings on one copy of its data, no network of its
   * own, the targets in order on the data the one before wrote; `empty`: on an empty data dir, the settings
   * alone). One finding per target, in order: the data trial's and the settings trial's (kv/trial).
   */
  proveStarts?(m: MemberSpec, targets: MemberTarget[], timeoutS: number, on?: 'copy' | 'empty'): Promise<DriverProof[]>;
  /**
   * The settings the member's next start on `target` runs with (its program for `target`, flags,
   * ETCD_* environment, config file): the trial's input. `why` when the driver cannot tell.
   */
  startSettings?(m: MemberSpec, target: MemberTarget, reads?: SettingsReads): Promise<StartSettings | { why: string }>;
  /** Whether a script of hostShell runs on this machine (its scratch dir and free ports are chosen here); absent: local drivers do, others do not. */
  runsHere?(m: MemberSpec): boolean;
  /** Runs a POSIX shell script on the member's host (`sh -s` here; the trial template there). Undefined: the driver has no way to. */
  hostShell?(m: MemberSpec, script: string, timeoutMs: number): Promise<HostShellResult>;
  /**
   * kv restore, before any member is stopped: throws naming what is wrong (a missing data dir, an
   * unreachable host). Undefined: the driver cannot restore.
   */
  checkRestore?(m: MemberSpec, r: RestoreRequest): Promise<string>;
  /** kv restore, still before any stop: builds what can be built beside the live data (local: the restored dir). */
  prepareRestore?(m: MemberSpec, r: RestoreRequest): Promise<void>;
  /** kv restore, with the member stopped: its old data dir kept under a new name, the restored one in place. */
  restoreData?(m: MemberSpec, r: RestoreRequest): Promise<string>;
  /** Drops what prepareRestore built (the restore did not go ahead). */
  abandonRestore?(m: MemberSpec, r: RestoreRequest): Promise<void>;
}

/** What the operator allows a clone (kv upgrade's flags). */
export interface CloneLook {
  /** --rehearsal-copy-keys: members on other hosts with certificates have their certificate, key and CA files brought here too. */
  copyKeys?: boolean;
}

/** What a search for a clone reads of the members through their driver (kv/rehearsal/clone-find.ts). */
export interface CloneReach {
  /** A settings template is given (the start per version is known). */
  settings: boolean;
  here(m: MemberSpec): boolean;
  running(m: MemberSpec): Promise<(StartSettings & { exe?: string; pid?: number }) | { why: string }>;
  shell(m: MemberSpec, script: string): Promise<HostShellResult>;
  /** The argv that runs a script given on its input on the member's host (the trial template): members elsewhere are fetched through it. */
  reach?(m: MemberSpec): readonly string[] | undefined;
  versionSettings?(m: MemberSpec, target: MemberTarget): Promise<Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string }>;
  readConfig?(m: MemberSpec, target: MemberTarget): Promise<{ file: string; text: string } | undefined>;
  hostBinary?(version: string): string | undefined;
  /** --rehearsal-copy-keys (CloneLook). */
  copyKeys?: boolean;
}

/** What the clone's members ask of their driver (kv/rehearsal/command-clone.ts): every read is the driver's own. */
export interface CloneReads {
  hostShell(m: MemberSpec, script: string, timeoutMs: number): Promise<HostShellResult>;
  startSettings(m: MemberSpec, target: MemberTarget, reads?: SettingsReads): Promise<StartSettings | { why: string }>;
  readonly dataLayout?: (m: MemberSpec) => Promise<DataLayout>;
  /** What a start on a version runs, as the driver's settings template prints it. */
  versionSettings(m: MemberSpec, target: MemberTarget): Promise<Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string }>;
  binaryVersion(m: MemberSpec, target: MemberTarget): Promise<{ version: string } | { why: string }>;
  hostBinary(version: string): string | undefined;
  readConfig(m: MemberSpec, target: MemberTarget): Promise<{ file: string; text: string } | undefined>;
  v2DataBytes(m: MemberSpec): Promise<number | undefined>;
  hostV2Size(m: MemberSpec): Promise<V2SizeRead>;
  measuresV2(m: MemberSpec): boolean;
  runsHere(m: MemberSpec): boolean;
}

/** A command driver's reads that go to the members' hosts: inside a rehearsal's clone, answered there for members fetched from their hosts. */
export type HostReads = Pick<CloneReads, 'hostShell' | 'versionSettings' | 'readConfig' | 'v2DataBytes'>;

/** MemberDriver.keptByHops: what a hop kept of each member (a container of the old image), listed and removed. */
export interface KeptByHops {
  /** Every member's kept things, as their host has them. */
  list(members: readonly MemberSpec[]): Promise<Array<{ member: string; name: string; image: string; running: boolean }>>;
  /** One removed (never forced); the detail. */
  remove(m: MemberSpec, name: string): Promise<string>;
}

/**
 * MemberDriver.cloning: the rehearsal's clone of members that the driver finds by looking at them (the
 * command driver: each member's process here; the container driver: podman's containers here), and the
 * driver of the clone's members inside it.
 */
export interface Cloning {
  /** The members looked at: clonable() answers what was found from then on. */
  look(members: readonly MemberSpec[], how?: CloneLook): Promise<void>;
  /** Inside the clone: the driver of its members, from the record the parent left in the clone's copy of opsctl's data directory (`dataDir`). */
  inClone(dataDir: string): Promise<MemberDriver>;
  /** After the clone's run: what it left outside its copy (an engine's containers, of the members last looked at) removed; what was removed. */
  drop?(): Promise<string[]>;
}

/**
 * Where a driver's members run, answered by the driver (MemberDriver.place): a flow asks these questions,
 * never which driver it is.
 */
export interface MemberPlace {
  /**
   * opsctl starts the members itself, as processes of this machine (the sandbox, members on local data dirs):
   * their data dirs, WALs and binaries are read here, their backups kept under opsctl's data directory.
   */
  readonly startsHere: boolean;
  /**
   * The operator's templates run each member on its host (the command driver and its presets): checks and
   * measures run there through its scripts and templates, the backups stay on the hosts.
   */
  readonly hostTemplates: boolean;
}

/** Members opsctl starts itself on this machine (the local driver). */
export const STARTS_HERE: MemberPlace = { startsHere: true, hostTemplates: false };
/** Members the operator's templates run on their hosts (the command driver). */
export const BY_HOST_TEMPLATES: MemberPlace = { startsHere: false, hostTemplates: true };
/** Members reached neither way (no driver; the container driver answers its questions through its own methods). */
export const ELSEWHERE: MemberPlace = { startsHere: false, hostTemplates: false };

/**
 * Where a driver's members run (ELSEWHERE with no driver). A driver that does not say (a test's fake) is
 * answered as its kind's own driver answers.
 */
export function placeOf(d: Pick<MemberDriver, 'type' | 'place'> | undefined): MemberPlace {
  if (!d) return ELSEWHERE;
  return d.place ?? (d.type === 'local' ? STARTS_HERE : d.type === 'command' ? BY_HOST_TEMPLATES : ELSEWHERE);
}

/** A start the driver proved itself (MemberDriver.proveStarts): ok with its version and time, or the program's own words. */
export interface DriverProof {
  result: 'ok' | 'problem' | 'not-checked';
  detail: string;
  ms?: number;
  version?: string;
}

/**
 * One round of settings reads, owned by its caller (the trials before a hop's first stop): what a driver
 * reads on a member's host for startSettings (its running process, its config template's output per
 * version) is read once per round and shared by every target of the round, the settings trials and the
 * data trials of every hop alike. A new round (a new map) reads again: a member restarted since is read anew.
 */
export type SettingsReads = Map<string, Promise<unknown>>;

/** `read()` once per key in a round of reads (none: every call reads). */
export function sharedRead<T>(reads: SettingsReads | undefined, key: string, read: () => Promise<T>): Promise<T> {
  if (!reads) return read();
  let p = reads.get(key) as Promise<T> | undefined;
  if (!p) {
    p = read();
    reads.set(key, p);
  }
  return p;
}

/** What the v2 size script printed: the newest snapshot file's size, the WAL's v2 writes, or (no perl there) every byte of the WAL. */
export type V2SizeRead =
  | { kind: 'snap'; bytes: number }
  | { kind: 'wal'; bytes: number; writes: number; files: number }
  | { kind: 'walall'; bytes: number }
  | { kind: 'none'; why: string };

/** What one member's data is rebuilt with (the same for every driver). */
export interface RestoreRequest {
  snapshot: string;
  name: string;
  peerUrl: string;
  /** name=peerURL,… of every member. */
  initialCluster: string;
  /** The NEW cluster token: the restored cluster is a new cluster, never confused with the old one. */
  token: string;
  /** A timestamp for the kept old data dir: DIR.before-restore-<run>. */
  run: string;
  target: MemberTarget;
}

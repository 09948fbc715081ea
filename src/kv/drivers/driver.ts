import type { MemberSpec } from '../cluster.js';

/** What a member runs: a simulated minor version, or a directory with real etcd binaries. */
export interface MemberTarget {
  version: string;
  binDir?: string;
}

/** How opsctl controls member processes. */
export interface MemberDriver {
  readonly type: 'local' | 'command';
  /** Ask the member to stop (gracefully). */
  stop(m: MemberSpec): Promise<void>;
  /** Whether the member's process still exists (not only whether its port answers). */
  isRunning(m: MemberSpec): Promise<boolean>;
  /** Start the member on `target`. */
  start(m: MemberSpec, target: MemberTarget): Promise<void>;
  /** Last resort after a stop timed out (local: SIGKILL). */
  kill?(m: MemberSpec): Promise<void>;
  /** Bytes of v2 data, when the driver can tell (for --settle auto). */
  v2DataBytes?(m: MemberSpec): Promise<number | undefined>;
  /** Copies a stopped member's data dir to `dest` (the seed: back up every data dir); returns bytes. */
  backupDataDir?(m: MemberSpec, dest: string): Promise<number>;
  /** What the member runs now, as the driver knows it. */
  current(m: MemberSpec): MemberTarget | undefined;
}

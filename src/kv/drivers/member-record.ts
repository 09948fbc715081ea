import { closeSync, existsSync, fdatasyncSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';

/**
 * A local member's process record, beside its PID file (`<name>.proc.json`): written durably before
 * the spawn ("starting": what is about to run, its data dir and ports) and again after it
 * ("started": the PID and the process's start time). A start killed between the two leaves the
 * intent; the member is then found by its data dir and ports (member-procs.ts), never lost.
 */
export interface MemberRecord {
  member: string;
  state: 'starting' | 'started';
  /** The program and its arguments, as spawned. */
  file: string;
  args: string[];
  target: { version: string; binDir?: string };
  dataDir?: string;
  configFile?: string;
  ports: number[];
  pid?: number;
  /** /proc/<pid>/stat field 22: with the PID, names one process for good (a recycled PID has another). */
  startTime?: string;
  at: string;
}

/** Where a member's process record is: beside its PID file; undefined without one. */
export function recordPath(m: MemberSpec): string | undefined {
  return m.pidFile ? join(dirname(m.pidFile), `${m.name}.proc.json`) : undefined;
}

/** The record, or undefined when there is none or it is unreadable (the search by data dir and ports still finds the member). */
export function readRecord(m: MemberSpec): MemberRecord | undefined {
  const file = recordPath(m);
  if (!file || !existsSync(file)) return undefined;
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as MemberRecord;
    return r && typeof r === 'object' && r.member === m.name ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `text` to `file` so that a crash (of opsctl or of the machine) leaves the old or the new
 * content, whole: a temp file, its data synced, renamed over, the directory synced.
 */
export function writeDurably(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  const d = openSync(dirname(file), 'r');
  try {
    fsyncSync(d);
  } finally {
    closeSync(d);
  }
}

export function writeRecord(m: MemberSpec, r: MemberRecord): void {
  const file = recordPath(m);
  if (file) writeDurably(file, `${JSON.stringify(r, null, 2)}\n`);
}

/** A local member's own files that a start writes or reads or a check measures: its process record, its config file for one-off settings, its v2 snapshot files. */
import { closeSync, existsSync, fdatasyncSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { parseYamlDocument, YamlTextError } from '../../core/yaml.js';
import { OpsError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { readLocalFileSync } from '../../core/local-file.js';

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

/** Where a member's own config file is kept while a start with one-off settings runs on an edited copy. */
export const keptConfig = (configFile: string) => `${configFile}.opsctl-kept`;

/**
 * One-off settings for a start (kv upgrade --fix-v2store): real etcd reads no flags beside
 * --config-file, so the member's config file gets them, its own text kept durably beside it first
 * (a crash leaves the original there, and the next start puts it back). Without settings, a kept
 * original goes back in place (the file names the member: its process is found by it).
 */
export async function oneOffSettings(configFile: string, settings: Record<string, string> | undefined): Promise<void> {
  const kept = keptConfig(configFile);
  if (!settings || !Object.keys(settings).length) {
    if (existsSync(kept)) renameSync(kept, configFile);
    return;
  }
  const what = { what: "the member's config file" };
  if (!existsSync(kept)) writeDurably(kept, readLocalFileSync(configFile, what));
  const doc = await parseYamlDocument(readLocalFileSync(kept, what)).catch((err: unknown) => {
    // (the yaml library refused to write such a document back, in its own words)
    throw err instanceof YamlTextError
      ? new OpsError(`the member's config file ${kept} is not valid YAML (${err.message})`, ExitCode.failure, {
          hint: 'fix the YAML: etcd reads this file with --config-file',
        })
      : err;
  });
  for (const [k, v] of Object.entries(settings)) doc.set(k, /^\d+$/.test(v) ? Number(v) : v);
  writeDurably(configFile, doc.toString());
}

/** The name of the member's newest v2 snapshot file (member/snap/TERM-INDEX.snap), if any. */
export function newestSnapName(dataDir: string | undefined): string | undefined {
  const dir = join(dataDir ?? '', 'member', 'snap');
  if (!dataDir || !existsSync(dir)) return undefined;
  return readdirSync(dir)
    .filter((f) => /^[0-9a-f]{16}-[0-9a-f]{16}\.snap$/.test(f))
    .sort()
    .pop();
}

/**
 * The v2 store's size as the member's newest snapshot file holds it (member/snap/TERM-INDEX.snap,
 * hex-named, so the greatest name is the newest): each .snap is the whole v2 store, and etcd keeps
 * several, so their sum counts it several times. Undefined with no .snap yet (the v2 data is then in
 * the WAL only: the file says nothing of its size).
 */
export function newestSnapBytes(dataDir: string | undefined): number | undefined {
  const newest = newestSnapName(dataDir);
  return newest === undefined ? undefined : statSync(join(dataDir ?? '', 'member', 'snap', newest)).size;
}

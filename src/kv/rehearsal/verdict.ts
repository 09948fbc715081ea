/**
 * A rehearsal's verdict kept for a later run (issue kv-rehearse): `kv upgrade --rehearse` before the window,
 * the upgrade in it. A passed verdict is reused by a run of the same plan within a stated time (the run's
 * --rehearsal-valid, 12 h by default) when nothing it proved has changed: the same members, the same hops,
 * and for every member and hop the same start settings (program, arguments, ETCD_* environment, config file
 * text) and the same target binary (its path, size and time). Data written since is not the verdict's: the
 * run's checks read it again, and the just-in-time check reads each member's WAL right before its start.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver } from '../drivers/driver.js';
import { writeDurably } from '../drivers/member-files.js';

export interface KeptVerdict {
  /** When the rehearsal passed (ISO time). */
  at: string;
  /** The hops it rehearsed ("3.5 → 3.6, 3.6 → 3.7"). */
  hops: string;
  fingerprint: string;
  ms: number;
}

/** Where a cluster's last passed verdict is kept, under opsctl's data directory. */
export const verdictPath = (dataDir: string, clusterKey: string): string => join(dataDir, 'rehearsals', `${clusterKey}.json`);

/**
 * What the verdict proved, as one hash: the members, the hops, each member's start settings on each hop's
 * target and each target binary's path, size and time. Undefined when any of it cannot be read (no reuse then).
 */
export async function planFingerprint(
  driver: MemberDriver,
  members: readonly MemberSpec[],
  hops: ReadonlyArray<{ from: string; to: string }>,
  bins: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  if (!driver.startSettings) return undefined;
  const parts: unknown[] = [members.map((m) => [m.name, m.endpoint]), hops.map((h) => [h.from, h.to])];
  for (const h of hops) {
    const dir = bins[h.to];
    if (dir) {
      try {
        const st = statSync(join(dir, 'etcd'));
        parts.push([h.to, dir, st.size, st.mtimeMs]);
      } catch {
        return undefined;
      }
    } else parts.push([h.to, driver.hostBinary?.(h.to) ?? null]);
    // (every member's settings asked at once: each may be a template's process or a read on the member's host)
    const read = driver.startSettings.bind(driver);
    const settings = await Promise.all(members.map((m) => read(m, { version: h.to, ...(dir ? { binDir: dir } : {}) })));
    for (const [i, s] of settings.entries()) {
      if ('why' in s) return undefined;
      parts.push([members[i]!.name, h.to, s.program, s.args, Object.entries(s.env).sort(), s.config?.text ?? null, s.cwd ?? null]);
    }
  }
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** The kept verdict, when it is of this plan and younger than `validMs`; else undefined (an unreadable file is not a verdict). */
export function reusableVerdict(file: string, fingerprint: string, now: number, validMs: number): KeptVerdict | undefined {
  const v = keptWithin(file, now, validMs);
  return v?.fingerprint === fingerprint ? v : undefined;
}

/** The kept verdict younger than `validMs`, whatever plan it is of (the run's reads may begin before its fingerprint is read). */
export function keptWithin(file: string, now: number, validMs: number): KeptVerdict | undefined {
  if (validMs <= 0) return undefined;
  let v: Partial<KeptVerdict>;
  try {
    v = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeptVerdict>;
  } catch {
    return undefined;
  }
  const at = typeof v.at === 'string' ? Date.parse(v.at) : NaN;
  return Number.isFinite(at) && now >= at && now - at <= validMs ? (v as KeptVerdict) : undefined;
}

/** Keeps a passed verdict (durably: a later run in the window relies on it). */
export function keepVerdict(file: string, v: KeptVerdict): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeDurably(file, `${JSON.stringify(v, null, 2)}\n`);
}

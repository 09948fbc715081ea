import { existsSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeDurably } from './member-record.js';
import { parseYamlDocument, YamlTextError } from '../../core/yaml.js';
import { OpsError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { readLocalFileSync } from '../../core/local-file.js';

/** A local member's own files that a start reads or a check measures: its config file for one-off settings, its v2 snapshot files. */

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

import { lstatSync, readFile } from 'node:fs';
import { OpsError } from '@opsctl/shared/errors.js';
import type { RefusedLine } from './journal.js';

/** What identifies a file's content without reading it: inode, size and modification time. */
export type FileId = string;

export function fileId(path: string): FileId | undefined {
  try {
    const st = lstatSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.isSymbolicLink() ? 'l' : 'f'}`;
  } catch (err) {
    // missing, or under something that is not a directory: reading it says which (readRaw)
    if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
}

/** fsync of a directory: a new file's name in it survives a crash of the machine. */
export async function syncDir(dir: string): Promise<void> {
  const { open } = await import('node:fs/promises');
  const fh = await open(dir, 'r').catch(() => undefined);
  await fh?.sync().catch(() => undefined);
  await fh?.close();
}

/**
 * A small file's text, undefined when it cannot be read. node:fs's callback API, not node:fs/promises: a command that
 * only reads the state never loads that module and the 8 it brings (readline among them; about 3 ms of CPU).
 */
export function readOrUndefined(file: string): Promise<string | undefined> {
  return new Promise((done) => readFile(file, 'utf8', (err, text) => done(err ? undefined : text)));
}

export async function digest(raw: string): Promise<string> {
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(raw).digest('hex');
}

/** The mock's state file cannot be used as it is. Exit 1; the file is left exactly as it was. */
export class StateFileError extends OpsError {
  constructor(
    readonly path: string,
    problem: string,
    hint = `opsctl leaves it untouched. Move it aside to start with a fresh state (mv ${path} ${path}.bad), or fix it by hand`,
  ) {
    super(`the mock state file ${path} is not usable: ${problem}`, 1, { code: 'state_file', hint });
  }
}

const writes = (n: number) => `${n} write${n === 1 ? '' : 's'}`;

/**
 * A journal that cannot be replayed as it is, with advice that never drops an answered write unsaid: how
 * many writes it holds, which lines fail, how many still apply, and the command that keeps those
 * (`--salvage-journal`); moving it aside is named with what it would lose.
 */
export function journalError(journal: string, problem: string, at: { lines: number; refused?: readonly RefusedLine[] }): StateFileError {
  const snapshot = journal.replace(/\.journal$/, '');
  const refused = at.refused ?? [];
  const keep = at.lines - refused.length;
  const apply = keep === 1 ? 'applies' : 'apply';
  const lose = `moving it aside (mv ${journal} ${journal}.bad) would lose all ${writes(at.lines)} since the snapshot ${snapshot}`;
  if (refused.length > 0) {
    const which = refused.map((r) => r.line).join(', ');
    return new StateFileError(
      journal,
      `${problem} (${refused.length} of its ${writes(at.lines)} cannot be applied: line ${which}; the other ${keep} still ${apply})`,
      `opsctl leaves it untouched. To keep the ${writes(keep)} that still ${apply}, run: opsctl mock serve --state ${snapshot} --salvage-journal (it sets line ${which} aside in ${journal}.rejected, names each, and keeps the journal as it was in ${journal}.bad); ${lose}`,
    );
  }
  return new StateFileError(journal, problem, `opsctl leaves it untouched: look at it, or fix it by hand; ${lose}`);
}

/** What `--salvage-journal` did: the journal's writes applied, those set aside (and where), and the journal as it was. */
export interface SalvageReport {
  journal: string;
  lines: number;
  applied: number;
  refused: RefusedLine[];
  /** The refused lines, one JSON object a line ({line, problem, text}); absent when none was. */
  rejectedPath?: string;
  /** The journal as it was before the salvage. */
  keptAs?: string;
  /** An incomplete last line (a write never answered) that was dropped. */
  torn: boolean;
}

/** Writes the refused lines and a copy of the journal beside it (never over an earlier one), before the salvaged state replaces both. */
export async function setAside(journal: string, text: string, refused: readonly RefusedLine[]): Promise<{ rejectedPath?: string; keptAs: string }> {
  const keptAs = await writeNew(`${journal}.bad`, text);
  if (refused.length === 0) return { keptAs };
  const rejectedPath = await writeNew(`${journal}.rejected`, refused.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return { rejectedPath, keptAs };
}

/** Writes `text` to `path`, or `path.1`, `path.2`… when that exists; the name written. */
async function writeNew(path: string, text: string): Promise<string> {
  const { writeFile } = await import('node:fs/promises');
  for (let n = 0; ; n++) {
    const name = n === 0 ? path : `${path}.${n}`;
    try {
      await writeFile(name, text, { mode: 0o600, flag: 'wx' });
      return name;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 999) throw err;
    }
  }
}

/** Aborted once every write of the batch has lost its requester (a batch of writes from no request never is). */
export function allAborted(batch: ReadonlyArray<{ signal?: AbortSignal }>): AbortSignal {
  const c = new AbortController();
  const signals = batch.map((p) => p.signal);
  if (signals.some((s) => s === undefined)) return c.signal;
  const check = () => {
    if (signals.every((s) => s!.aborted)) c.abort();
  };
  for (const s of signals) s!.addEventListener('abort', check, { once: true });
  check();
  return c.signal;
}

/** The snapshot's text, undefined when there is none; a link, another user's file or a directory is refused naming the fix. */
export async function readStateFile(path: string, maxBytes: number): Promise<string | undefined> {
  const { readOwnFileSync } = await import('@opsctl/shared/local-file.js');
  try {
    // A link, another user's file, or one others can write: refused (exit 1), never followed or reset.
    return readOwnFileSync(path, {
      what: 'the mock state file',
      maxBytes,
      hint: `move it aside (mv ${path} ${path}.bad); the next command starts a fresh state`,
    });
  } catch (err) {
    if (err instanceof OpsError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ENOTDIR') {
      const { dirError } = await import('@opsctl/shared/private-dir.js');
      throw dirError((await import('node:path')).dirname(path), err);
    }
    if (code === 'EISDIR') throw new StateFileError(path, 'is a directory, not a file');
    if (code === 'EACCES' || code === 'EPERM') throw new StateFileError(path, `cannot be read (${code})`, 'fix its permissions, or move it aside');
    throw err;
  }
}

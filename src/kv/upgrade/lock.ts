import { OpsError } from '../../core/errors.js';
import { lockJournal, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import type { UpgradeOptions } from './options.js';

/**
 * The journal's lock (or the ladder file's: `ownerOf` reads the owner a file records, for the message). A run
 * that died holding it (SIGKILL, a crash) is known by its pid and start time, and its lock is taken over at
 * once with a note (the upgrade's resume and the roll-back after a crash); a live one refuses this run.
 */
export async function acquireLock(
  file: string,
  o: Pick<UpgradeOptions, 'lockStaleMs' | 'reporter'>,
  ownerOf: (file: string) => { pid: number; host: string } | undefined = (f) => safeRead(f)?.owner,
): Promise<() => Promise<void>> {
  try {
    return await lockJournal(file, o.lockStaleMs ?? 4000, (text) => o.reporter.note(text));
  } catch (err) {
    if (!(err instanceof OpsError) || err.code !== 'locked') throw err;
    const owner = ownerOf(file);
    throw new OpsError(`another kv upgrade of this cluster is running${owner ? ` (pid ${owner.pid} on ${owner.host})` : ''}`, 1, {
      code: 'locked',
      hint: 'wait for it to finish, or stop it (a run that died leaves no lock in the way: the next run takes it over)',
    });
  }
}

function safeRead(file: string): Journal | undefined {
  try {
    return readJournal(file);
  } catch {
    return undefined;
  }
}

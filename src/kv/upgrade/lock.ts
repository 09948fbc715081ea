import { hostname } from 'node:os';
import { OpsError } from '../../core/errors.js';
import { lockJournal, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { sleep } from '../cluster/wait.js';
import type { UpgradeOptions } from './options.js';

/**
 * The journal's lock (or the ladder file's: `ownerOf` reads the owner a file records); when the run that
 * holds it died on this host (SIGKILL, a crash), waits for its lock to go stale instead of refusing (the
 * upgrade's resume and the roll-back after a crash).
 */
export async function acquireLock(
  file: string,
  o: Pick<UpgradeOptions, 'lockStaleMs' | 'now' | 'reporter'>,
  ownerOf: (file: string) => { pid: number; host: string } | undefined = (f) => safeRead(f)?.owner,
): Promise<() => Promise<void>> {
  const stale = o.lockStaleMs ?? 4000;
  const deadline = o.now() + stale * 3;
  for (;;) {
    try {
      return await lockJournal(file, stale);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      const owner = ownerOf(file);
      const deadOwner = owner && owner.host === hostname() && owner.pid !== process.pid && !pidExists(owner.pid);
      if (!deadOwner || o.now() > deadline) {
        throw new OpsError(`another kv upgrade of this cluster is running${owner ? ` (pid ${owner.pid} on ${owner.host})` : ''}`, 1, {
          code: 'locked',
          hint: 'wait for it to finish; if it crashed, run the command again in a few seconds (its lock goes stale)',
        });
      }
      o.reporter.note(`the previous run (pid ${owner.pid}) died; waiting for its lock to go stale`);
      await sleep(Math.min(1000, stale / 2));
    }
  }
}

function safeRead(file: string): Journal | undefined {
  try {
    return readJournal(file);
  } catch {
    return undefined;
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

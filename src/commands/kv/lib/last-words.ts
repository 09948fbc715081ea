import type { Context } from '../../../context.js';
import { journalPath, memberInFlight, type Journal } from '../../../kv/journal/journal.js';
import { readJournal } from '../../../kv/journal/read.js';
import { shellLine } from './shared.js';

/**
 * What a verb that cycles members says when the process ends early (a second Ctrl-C, a closed pipe):
 * the member it left down, read from the journal at that moment (synchronously: a signal handler), and
 * the two ways on — the same command, or the roll-back. Nothing when no member is down, or when the journal
 * is missing or cannot be trusted (read through its validated reader: the process is ending, so it says nothing).
 */
export function downMemberWords(ctx: Context, key: string, rollbackCommand: string): () => string | undefined {
  const file = journalPath(ctx.paths.data, key);
  return () => {
    let j: Journal | undefined;
    try {
      j = readJournal(file);
    } catch {
      return undefined;
    }
    if (!j) return undefined;
    const down = memberInFlight(j);
    if (!down) return undefined;
    const same = shellLine(['opsctl', ...ctx.commandLine]);
    return `${down} is down (stopped by this run, not started yet): \`${same}\` brings it back and goes on, or \`${rollbackCommand}\` takes the cluster back (journal: ${file})`;
  };
}

import { readFileSync } from 'node:fs';
import type { Context } from '../../../context.js';
import { journalPath, memberInFlight, type Journal } from '../../../kv/journal/journal.js';
import { shellLine } from './shared.js';

/**
 * What a verb that cycles members says when the process ends early (a second Ctrl-C, a closed pipe):
 * the member it left down, read from the journal at that moment (synchronously: a signal handler), and
 * the two ways on — the same command, or the roll-back. Nothing when no member is down.
 */
export function downMemberWords(ctx: Context, key: string, rollbackCommand: string): () => string | undefined {
  const file = journalPath(ctx.paths.data, key);
  return () => {
    let j: Journal;
    try {
      j = JSON.parse(readFileSync(file, 'utf8')) as Journal;
    } catch {
      return undefined;
    }
    const down = memberInFlight(j);
    if (!down) return undefined;
    const same = shellLine(['opsctl', ...ctx.commandLine]);
    return `${down} is down (stopped by this run, not started yet): \`${same}\` brings it back and goes on, or \`${rollbackCommand}\` takes the cluster back (journal: ${file})`;
  };
}

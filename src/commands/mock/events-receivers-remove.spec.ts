import { CONFIRM_HELP } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'remove',
  aliases: ['rm'],
  args: ['<id>'],
  summary: `remove a receiver and its undelivered SETs (${CONFIRM_HELP})`,
  flags: { dryRun: { type: 'boolean', help: 'show what would be removed and change nothing' } },
  examples: ['opsctl mock events receivers remove rcv_0123456789ab'],
  load: (): RunModule => import('./events-receivers-remove.js'),
});

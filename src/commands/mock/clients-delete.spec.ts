import { CONFIRM_HELP } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'delete',
  aliases: ['rm'],
  args: [CLIENT_ARG],
  summary: `delete a client (${CONFIRM_HELP}); restorable for 30 days, deleted_client after`,
  flags: { dryRun: { type: 'boolean', help: 'show what would be deleted and change nothing' } },
  examples: ['opsctl mock clients delete 1234-abc.apps.mock --yes'],
  load: (): RunModule => import('./clients-delete.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { admin, CONFIRM_HELP, dryRun, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'delete',
  args: [LABEL_ARG, '<field>'],
  summary: `delete a field (a published one must be disabled first; ${CONFIRM_HELP})`,
  flags: { admin, dryRun },
  examples: ['opsctl labels fields delete 0a1b2c Level'],
  load: (): RunModule => import('./fields-delete.js'),
});

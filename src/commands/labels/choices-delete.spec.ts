import { defineVerb, type RunModule } from '../spec.js';
import { admin, CONFIRM_HELP, dryRun, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'delete',
  args: [LABEL_ARG, '<field>', '<choice>'],
  summary: `delete a choice (a published one must be disabled first; ${CONFIRM_HELP})`,
  flags: { admin, dryRun },
  examples: ['opsctl labels choices delete 0a1b2c Level Low'],
  load: (): RunModule => import('./choices-delete.js'),
});

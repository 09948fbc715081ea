import { defineVerb, type RunModule } from '../spec.js';
import { admin, CONFIRM_HELP, dryRun, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'delete',
  aliases: ['rm'],
  args: [LABEL_ARG],
  summary: `delete a draft or disabled label (${CONFIRM_HELP})`,
  flags: { admin, dryRun },
  examples: ['opsctl labels delete 0a1b2c --yes'],
  load: (): RunModule => import('./delete.js'),
});

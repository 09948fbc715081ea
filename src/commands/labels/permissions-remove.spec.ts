import { defineVerb, type RunModule } from '../spec.js';
import { admin, CONFIRM_HELP, dryRun, LABEL_ARG, revision } from './lib/flags.js';

export const spec = defineVerb({
  name: 'remove',
  args: [LABEL_ARG, '<principals...>'],
  summary: `revoke by email, audience or permission name (several: one :batchDelete; ${CONFIRM_HELP})`,
  flags: { revision, admin, dryRun },
  examples: ['opsctl labels permissions remove 0a1b2c bob@example.com'],
  load: (): RunModule => import('./permissions-remove.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { admin, CONFIRM_HELP, dryRun, LABEL_ARG, revision } from './lib/flags.js';

export const spec = defineVerb({
  name: 'set',
  args: [LABEL_ARG, '[grants...]'],
  summary: `make the permissions exactly these PRINCIPAL=ROLE grants (one :batchUpdate + one :batchDelete; removing any ${CONFIRM_HELP})`,
  flags: { revision, admin, dryRun },
  examples: ['opsctl labels permissions set 0a1b2c bob@example.com=READER audiences/default=APPLIER'],
  load: (): RunModule => import('./permissions-set.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG, revision } from './lib/flags.js';

export const spec = defineVerb({
  name: 'update',
  args: [LABEL_ARG, '<grants...>'],
  summary: 'create or change the role of PRINCIPAL=ROLE (PATCH …/permissions, one per grant)',
  flags: { revision, admin },
  examples: [
    'opsctl labels permissions update 0a1b2c bob@example.com=EDITOR',
    'opsctl labels permissions update Sensitivity audiences/default=READER --revision 3',
  ],
  load: (): RunModule => import('./permissions-update.js'),
});

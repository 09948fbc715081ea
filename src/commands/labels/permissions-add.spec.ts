import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG, revision } from './lib/flags.js';

export const spec = defineVerb({
  name: 'add',
  args: [LABEL_ARG, '<grants...>'],
  summary: 'grant PRINCIPAL=ROLE (several at once: one :batchUpdate)',
  flags: { revision, admin },
  examples: [
    'opsctl labels permissions add 0a1b2c bob@example.com=READER',
    'opsctl labels permissions add 0a1b2c carol@example.com=EDITOR audiences/default=APPLIER',
  ],
  load: (): RunModule => import('./permissions-add.js'),
});

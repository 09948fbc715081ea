import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG, revision } from './lib/flags.js';

export const spec = defineVerb({
  name: 'list',
  args: [LABEL_ARG],
  summary: 'list permissions',
  flags: { revision, admin },
  examples: ['opsctl labels permissions list 0a1b2c', 'opsctl labels permissions list 0a1b2c --revision 3 --json'],
  load: (): RunModule => import('./permissions-list.js'),
});

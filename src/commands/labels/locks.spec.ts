import { defineVerb, type RunModule } from '../spec.js';
import { LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'locks',
  args: [LABEL_ARG],
  summary: 'list the locks of a label or a revision',
  flags: { revision: { type: 'string', value: 'rev', help: 'a revision id' } },
  examples: ['opsctl labels locks 0a1b2c'],
  load: (): RunModule => import('./locks.js'),
});

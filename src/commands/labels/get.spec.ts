import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'get',
  args: [LABEL_ARG],
  summary: 'show a label (latest revision unless the name says @published or @REV)',
  flags: { admin },
  examples: ['opsctl labels get 0a1b2c', 'opsctl labels get labels/0a1b2c@published --json'],
  load: (): RunModule => import('./get.js'),
});

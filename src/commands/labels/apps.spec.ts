import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'apps',
  args: [LABEL_ARG, '[apps...]'],
  summary: 'the apps where the label can be used: drive, gmail (none given: no apps)',
  flags: { admin },
  examples: ['opsctl labels apps 0a1b2c drive gmail'],
  load: (): RunModule => import('./apps.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'integrity',
  args: [CLIENT_ARG, '<action>'],
  summary: 'mobile_b integrity check: enable (monitoring only) | enforce | unenforce | disable; in force up to 15 minutes later',
  examples: ['opsctl mock clients integrity 1234-abc.apps.mock enable', 'opsctl mock clients integrity 1234-abc.apps.mock enforce'],
  load: (): RunModule => import('./clients-integrity.js'),
});

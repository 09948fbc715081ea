import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'metrics',
  args: [CLIENT_ARG],
  summary: 'mobile_b integrity metrics: verified, unverified outdated client, unverified unknown origin, unverified invalid (and rejected)',
  examples: ['opsctl mock clients metrics 1234-abc.apps.mock', 'opsctl mock clients metrics 1234-abc.apps.mock --json'],
  load: (): RunModule => import('./clients-metrics.js'),
});

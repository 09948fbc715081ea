import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'integrity-token',
  args: [CLIENT_ARG],
  summary: 'print a valid integrity token for a mobile_b app (the attestation service stand-in), for X-Integrity-Token',
  examples: ['curl -H "X-Integrity-Token: $(opsctl mock clients integrity-token 1234-abc.apps.mock)" …'],
  load: (): RunModule => import('./clients-integrity-token.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'verify',
  args: [CLIENT_ARG],
  summary: 'ownership verification of a mobile_a or extension client against the store listings',
  flags: { account: { type: 'string', value: 'email', help: "the verifying account (store-console admin, or the item's publisher)", required: true } },
  examples: ['opsctl mock clients verify 1234-abc.apps.mock --account alice@example.com'],
  load: (): RunModule => import('./clients-verify.js'),
});

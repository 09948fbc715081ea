import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'verify',
  args: [CLIENT_ARG],
  summary: 'ownership verification of a mobile_a or extension client against the store listings',
  flags: {
    account: { type: 'string', value: 'email', help: "the verifying account (store-console admin, or the item's publisher)", required: true },
    wait: {
      type: 'string',
      value: 'duration',
      help: 'access just granted takes a while to be seen: keep trying (with a countdown) for this long, e.g. 5m; 0 tries once',
      default: '5m',
    },
  },
  examples: [
    'opsctl mock clients verify 1234-abc.apps.mock --account alice@example.com',
    'opsctl mock clients verify 1234-abc.apps.mock --account alice@example.com --wait 0',
  ],
  load: (): RunModule => import('./clients-verify.js'),
});

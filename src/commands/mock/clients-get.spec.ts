import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'get',
  args: [CLIENT_ARG],
  summary: 'show a client: its fields, integrity check, ownership and deletion state (never the secret)',
  examples: ['opsctl mock clients get opsctl-desktop.apps.mock'],
  load: (): RunModule => import('./clients-get.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'restore',
  args: [CLIENT_ARG],
  summary: 'restore a client deleted less than 30 days ago',
  examples: ['opsctl mock clients restore 1234-abc.apps.mock'],
  load: (): RunModule => import('./clients-restore.js'),
});

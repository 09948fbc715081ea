import { defineVerb, type RunModule } from '../spec.js';
import { cache } from './lib/flags.js';

export const spec = defineVerb({
  name: 'list',
  summary: 'the releases in the cache',
  flags: { cache },
  examples: ['opsctl kv release list', 'opsctl kv release list --json'],
  load: (): RunModule => import('./release-list.js'),
});

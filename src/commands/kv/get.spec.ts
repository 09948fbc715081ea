import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/flags.js';

export const spec = defineVerb({
  name: 'get',
  // the key's field is kvKey: --key names the TLS client key
  args: [{ name: '<key>', field: 'kvKey' }],
  summary: 'read a key through the JSON gateway',
  flags: cluster,
  examples: ['opsctl kv get config/mode', 'opsctl kv get config/mode --json'],
  load: (): RunModule => import('./get.js'),
});

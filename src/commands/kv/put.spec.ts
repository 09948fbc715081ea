import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/flags.js';

export const spec = defineVerb({
  name: 'put',
  // the key's field is kvKey: --key names the TLS client key
  args: [{ name: '<key>', field: 'kvKey' }, '[value]'],
  summary: 'write a key through the JSON gateway (the value as an argument, - for stdin, or --file)',
  flags: { ...cluster, file: { type: 'string', value: 'path', home: true, help: 'the value is the content of this file (- for stdin)' } },
  examples: ['opsctl kv put config/mode maintenance', 'opsctl kv put config/tls.pem --file ./tls.pem', 'generate-config | opsctl kv put config/app -'],
  load: (): RunModule => import('./put.js'),
});

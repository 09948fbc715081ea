import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'put',
  // the key's field is kvKey: --key names the TLS client key
  args: [{ name: '<key>', field: 'kvKey' }, '[value]'],
  summary: 'write a key (the value as an argument, - for stdin, or --file), with a lease as etcdctl put --lease',
  flags: {
    ...etcdctlLike,
    file: { type: 'string', value: 'path', home: true, help: 'the value is the content of this file (- for stdin)' },
    lease: { type: 'string', value: 'lease-id', help: 'attach the key to this lease (hex, as kv lease grant prints it): it is deleted when the lease ends' },
    prevKv: { type: 'boolean', help: 'also print the key as it was before' },
    ignoreValue: { type: 'boolean', help: 'keep the value the key has (change its lease only); give no value' },
    ignoreLease: { type: 'boolean', help: 'keep the lease the key has (change its value only)' },
  },
  examples: [
    'opsctl kv put config/mode maintenance',
    'opsctl kv put config/tls.pem --file ./tls.pem',
    'generate-config | opsctl kv put config/app -',
    'opsctl kv put lock/owner "$(hostname)" --lease "$(opsctl kv lease grant 60 --jq .id)"',
  ],
  load: (): RunModule => import('./put.js'),
});

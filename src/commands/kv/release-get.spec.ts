import { defineVerb, type RunModule } from '../spec.js';
import { cache } from './lib/flags.js';

export const spec = defineVerb({
  name: 'get',
  args: ['<version>'],
  summary: "download etcd-vVERSION-linux-<arch>.tar.gz, check it against the release's SHA256SUMS and its etcd --version, and cache it",
  flags: {
    from: {
      type: 'string',
      value: 'url',
      help: 'a mirror laid out like the official downloads (URL/vVERSION/{archive,SHA256SUMS})',
      default: 'https://github.com/etcd-io/etcd/releases/download',
    },
    cache,
  },
  examples: ['opsctl kv release get 3.5.21', 'opsctl kv release get 3.6.5 --json', 'opsctl kv release get 3.4.37 --from https://mirror.example/etcd'],
  load: (): RunModule => import('./release-get.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'list',
  summary: 'the raised alarms (NOSPACE, CORRUPT)',
  flags: etcdctlLike,
  examples: ['opsctl kv alarm list'],
  load: (): RunModule => import('./alarm-list.js'),
});

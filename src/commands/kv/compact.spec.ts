import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'compact',
  args: ['<revision>'],
  summary: 'compact the key history up to a revision (older revisions are gone)',
  flags: { ...etcdctlLike, physical: { type: 'boolean', help: 'wait until the compaction is applied to the db' } },
  examples: ['opsctl kv compact 1234'],
  load: (): RunModule => import('./compact.js'),
});

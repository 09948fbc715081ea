import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/flags.js';

export const spec = defineVerb({
  name: 'save',
  args: ['<file>'],
  summary: 'save a verified snapshot from one member',
  flags: {
    ...cluster,
    endpoint: { type: 'string', value: 'url', help: 'the member to take it from (default: the first healthy one)' },
    via: { type: 'string', value: 'how', help: 'auto | etcdctl | gateway', default: 'auto' },
    etcdctl: { type: 'string', value: 'path', help: 'the etcdctl to use' },
    snapshotTimeout: { type: 'string', value: 'duration', help: 'timeout', default: '2m' },
    force: { type: 'boolean', help: 'overwrite FILE if it exists (its directory must exist)' },
  },
  examples: ['opsctl kv snapshot save backup.db', 'opsctl kv snapshot save backup.db --force'],
  load: (): RunModule => import('./snapshot-save.js'),
});

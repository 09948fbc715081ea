import { defineVerb, type RunModule } from '../spec.js';
import { cluster, s3 } from './lib/flags.js';

export const spec = defineVerb({
  name: 'save',
  args: ['[file]'],
  summary: 'save a verified snapshot from one member',
  flags: {
    ...cluster,
    endpoint: { type: 'string', value: 'url', help: 'the member to take it from (default: the first healthy one)' },
    via: { type: 'string', value: 'how', help: 'auto | etcdctl | gateway', default: 'auto' },
    etcdctl: { type: 'string', value: 'path', home: true, help: 'the etcdctl to use' },
    snapshotTimeout: {
      type: 'string',
      value: 'duration',
      help: 'timeout of the snapshot; with --to, also of its upload (every request to the store, retries and clean-up included)',
      default: '2m',
    },
    force: { type: 'boolean', help: 'overwrite FILE if it exists (its directory must exist)' },
    to: { type: 'string', value: 's3://bucket/prefix', help: 'also upload it there, streamed and verified (FILE optional: a temporary file otherwise)' },
    ...s3,
  },
  examples: [
    'opsctl kv snapshot save backup.db',
    'opsctl kv snapshot save backup.db --force',
    'opsctl kv snapshot save --to s3://backups/etcd/prod --aws-profile backup',
  ],
  load: (): RunModule => import('./snapshot-save.js'),
});

import { backupsFrom, s3 } from './lib/flags.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  summary: 'every backup by run (upgrade or restore): kind, member, size, date, path, and the journal that records it',
  flags: {
    ...backupsFrom,
    ...s3,
  },
  examples: ['opsctl kv backups list', 'opsctl kv backups list --json', 'opsctl kv backups list --from s3://backups/etcd/prod'],
  load: (): RunModule => import('./backups-list.js'),
});

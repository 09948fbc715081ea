import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  summary: 'every backup by run (upgrade or restore): kind, member, size, date, path, and the journal that records it',
  examples: ['opsctl kv backups list', 'opsctl kv backups list --json'],
  load: (): RunModule => import('./backups-list.js'),
});

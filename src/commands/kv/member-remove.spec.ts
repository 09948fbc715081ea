import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/flags.js';

export const spec = defineVerb({
  name: 'remove',
  args: ['<member-id>'],
  summary: 'remove a member by its id (hex, as member list prints it)',
  flags: etcdctlLike,
  examples: ['opsctl kv member remove 8e9e05c52164694d'],
  load: (): RunModule => import('./member-remove.js'),
});

import { CONFIRM_HELP } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'remove',
  args: [{ name: '<member>', field: 'memberId', help: "the member's name, or its id (hex as kv member list prints it, or #decimal)" }],
  summary: `remove a member by its name or id (hex, as member list prints it; ${CONFIRM_HELP})`,
  flags: { ...etcdctlLike, dryRun: { type: 'boolean', help: 'show the member that would be removed and change nothing' } },
  examples: ['opsctl kv member remove 8e9e05c52164694d --dry-run', 'opsctl kv member remove 8e9e05c52164694d --yes'],
  load: (): RunModule => import('./member-remove.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { ROLES } from '../../labels/schema.js';

export const spec = defineVerb({
  name: 'list',
  aliases: ['ls'],
  summary: 'list labels with their state, revision and whether unpublished changes wait',
  flags: {
    publishedOnly: { type: 'boolean', help: 'only labels with a published revision (shows that revision)' },
    minimumRole: { type: 'string', value: 'role', help: 'only labels where you have at least this role', choices: ROLES },
    admin: { type: 'boolean', help: 'use admin access (useAdminAccess): every label of the organisation' },
    limit: { type: 'string', value: 'n', help: 'stop after this many labels' },
  },
  examples: ['opsctl labels list --published-only', 'opsctl labels list --json=id,properties'],
  load: (): RunModule => import('./list.js'),
});

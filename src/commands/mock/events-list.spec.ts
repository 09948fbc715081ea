import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  aliases: ['ls'],
  summary: 'the SETs sent or still being retried, with their delivery status',
  flags: {
    status: { type: 'string', value: 'status', help: 'only these', choices: ['pending', 'delivered', 'rejected'] },
    withSet: { type: 'boolean', help: 'include each signed SET (with --json)' },
  },
  examples: ['opsctl mock events list', 'opsctl mock events list --status pending --json=jti,attempts,last_error'],
  load: (): RunModule => import('./events-list.js'),
});

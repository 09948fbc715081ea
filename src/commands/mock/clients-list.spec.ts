import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  aliases: ['ls'],
  summary: 'list clients (deleted ones too, with their status)',
  flags: { active: { type: 'boolean', help: 'only clients that are not deleted' } },
  examples: ['opsctl mock clients list', 'opsctl mock clients list --active --json=client_id,status'],
  load: (): RunModule => import('./clients-list.js'),
});

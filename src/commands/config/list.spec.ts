import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  aliases: ['ls'],
  summary: 'list the settings of every profile (secrets hidden)',
  examples: ['opsctl config list --json'],
  load: (): RunModule => import('./list.js'),
});

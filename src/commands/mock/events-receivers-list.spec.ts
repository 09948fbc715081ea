import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  aliases: ['ls'],
  summary: 'the registered receivers',
  examples: ['opsctl mock events receivers list --json'],
  load: (): RunModule => import('./events-receivers-list.js'),
});

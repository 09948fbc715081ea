import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'set',
  args: ['<key>', '<value>'],
  summary: 'change a setting of the active profile',
  examples: ['opsctl config set tracker https://api.app.shortcut.com --profile work', 'opsctl config set profile work'],
  load: (): RunModule => import('./set.js'),
});

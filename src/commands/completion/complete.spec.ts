import { defineVerb, type RunModule } from '../spec.js';

/** `opsctl __complete SOURCE [PREFIX]`: hidden; what the completion scripts call for names the service knows. */
export const spec = defineVerb({
  name: '__complete',
  hidden: true,
  args: [
    { name: '<source>', help: 'states, labels, epics or profiles' },
    { name: '[prefix]', help: 'only names that start with this' },
  ],
  summary: 'print the names the service knows for a completion, one a line (used by the completion scripts)',
  load: (): RunModule => import('./complete.js'),
});

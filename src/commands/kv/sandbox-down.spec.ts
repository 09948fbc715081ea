import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'down',
  summary: 'stop the sandbox members (by PID) and remove their data',
  flags: { keep: { type: 'boolean', help: 'keep the data dirs' } },
  examples: ['opsctl kv sandbox down', 'opsctl kv sandbox down --keep'],
  load: (): RunModule => import('./sandbox-down.js'),
});

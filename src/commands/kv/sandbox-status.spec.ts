import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'status',
  summary: 'PIDs, health and versions of the sandbox members',
  examples: ['opsctl kv sandbox status', 'opsctl kv sandbox status --json'],
  load: (): RunModule => import('./sandbox-status.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { cluster, driver } from './lib/flags.js';

export const spec = defineVerb({
  name: 'rollback',
  summary: 'restart upgraded members on their previous version (only while the cluster version has not moved)',
  flags: { ...cluster, ...driver, dryRun: { type: 'boolean', help: 'print which members it would bring back, and change nothing' } },
  examples: ['opsctl kv rollback --dry-run', 'opsctl kv rollback', 'opsctl kv rollback --cluster prod.yaml --json'],
  load: (): RunModule => import('./rollback.js'),
});

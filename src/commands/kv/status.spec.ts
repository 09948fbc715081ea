import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'status',
  summary: 'id, versions, leader, revision and health of every member',
  flags: {
    ...cluster,
    report: {
      type: 'string',
      value: 'file.html',
      home: true,
      help: "instead: write the last upgrade's HTML report from its journal (with --json, print its data)",
    },
  },
  examples: ['opsctl kv status', 'opsctl kv status --json=id,leader,revision', 'opsctl kv status --report upgrade.html'],
  load: (): RunModule => import('./status.js'),
});

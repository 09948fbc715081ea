import { defineVerb, type RunModule } from '../spec.js';
import { perMember } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'defrag',
  summary: "defragment each member's db (its reads and writes wait while it runs): every member, or with --cluster every member of the member list",
  flags: perMember,
  examples: ['opsctl kv defrag', 'opsctl kv defrag --endpoints http://10.0.0.1:2379'],
  load: (): RunModule => import('./defrag.js'),
});

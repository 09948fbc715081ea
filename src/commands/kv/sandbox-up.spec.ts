import { LADDER_MINORS, ladderSpan } from '@opsctl/shared/etcd-ladder.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'up',
  summary: `start a local cluster (simulated ${ladderSpan(LADDER_MINORS)} members, or real etcd from --etcd-bin)`,
  flags: {
    members: { type: 'string', value: 'n', help: 'how many members', default: '3' },
    version: {
      type: 'string',
      value: 'minor',
      help: `simulated members: ${ladderSpan(LADDER_MINORS)}, or a patch release such as 3.5.26 (default 3.2)`,
      suggest: LADDER_MINORS,
    },
    kvVersion: { type: 'string', value: 'minor', help: 'the same as --version', hidden: true, sameAs: 'version' },
    etcdBin: { type: 'string', value: 'dir', home: true, help: 'run real etcd from this directory instead' },
    heartbeat: { type: 'string', value: 'duration', help: 'heartbeat interval of the members' },
    timeout: { type: 'string', value: 'duration', help: 'how long the members may take to be healthy', default: '60s' },
    ports: {
      type: 'string',
      value: 'list',
      help: 'the ports to try first, client then peer, member by member (e.g. 2379,2380,22379,22380,32379,32380); one taken at the start: the sandbox is laid out on fresh ones, said so',
    },
    config: {
      type: 'list',
      value: '[member:]key=value',
      repeat: true,
      help: "a setting in the members' etcd config files (YAML value; repeatable), e.g. auto-compaction-retention=1 or kv2:max-request-bytes=1048576",
    },
  },
  examples: [
    'opsctl kv sandbox up --members 3 --version 3.2',
    'opsctl kv sandbox up --etcd-bin /usr/bin',
    'opsctl kv sandbox up --config auto-compaction-mode=periodic --config \'auto-compaction-retention="24h"\'',
  ],
  load: (): RunModule => import('./sandbox-up.js'),
});

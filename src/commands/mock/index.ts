import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addGroup, defineGroup } from '../spec.js';
import { spec as clientsCreate } from './clients-create.spec.js';
import { spec as clientsDelete } from './clients-delete.spec.js';
import { spec as clientsGet } from './clients-get.spec.js';
import { spec as clientsIntegrityToken } from './clients-integrity-token.spec.js';
import { spec as clientsIntegrity } from './clients-integrity.spec.js';
import { spec as clientsList } from './clients-list.spec.js';
import { spec as clientsMetrics } from './clients-metrics.spec.js';
import { spec as clientsRestore } from './clients-restore.spec.js';
import { spec as clientsSweep } from './clients-sweep.spec.js';
import { spec as clientsUpdate } from './clients-update.spec.js';
import { spec as clientsVerify } from './clients-verify.spec.js';
import { spec as eventsDeliver } from './events-deliver.spec.js';
import { spec as eventsList } from './events-list.spec.js';
import { spec as receiversAdd } from './events-receivers-add.spec.js';
import { spec as receiversList } from './events-receivers-list.spec.js';
import { spec as receiversRemove } from './events-receivers-remove.spec.js';
import { spec as eventsTrigger } from './events-trigger.spec.js';
import { spec as serve } from './serve.spec.js';

/** `opsctl mock …`: the mocked services standalone, the developer console's clients, and security events. Its verbs, in --help order. */
export const noun = defineGroup({
  name: 'mock',
  summary: NOUN_SUMMARIES.mock,
  verbs: [
    serve,
    {
      name: 'clients',
      summary:
        "the mock authorization server's OAuth clients, as its developer console manages them (OPSCTL_AUTH_URL, the profile's auth, or the embedded mock)",
      examples: [
        'opsctl mock clients create --type mobile_b --name "iOS app" --bundle-id com.example.app --team-id ABCDE12345',
        'opsctl mock clients integrity 1234-abc.apps.mock enable',
        'OPSCTL_AUTH_URL=http://127.0.0.1:8080 opsctl mock clients list',
      ],
      verbs: [
        clientsList,
        clientsGet,
        clientsCreate,
        clientsUpdate,
        clientsDelete,
        clientsRestore,
        clientsIntegrity,
        clientsMetrics,
        clientsIntegrityToken,
        clientsVerify,
        clientsSweep,
      ],
    },
    {
      name: 'events',
      summary: 'security events (RFC 8417 SETs, pushed per RFC 8935) the mock authorization server sends to receivers',
      examples: [
        'opsctl mock events receivers add --url http://127.0.0.1:9000/secevents --client-id opsctl-desktop.apps.mock',
        'opsctl mock events trigger account-disabled --user alice@example.com',
        'opsctl mock events list --status pending',
      ],
      verbs: [
        eventsList,
        eventsTrigger,
        eventsDeliver,
        {
          name: 'receivers',
          summary: 'where SETs are pushed (one receiver per client and URL)',
          examples: ['opsctl mock events receivers list'],
          verbs: [receiversAdd, receiversList, receiversRemove],
        },
      ],
    },
  ],
});

export function register(program: Command, ctx: Context): void {
  addGroup(program, ctx, noun);
}

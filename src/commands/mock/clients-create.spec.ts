import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_TYPES, FIELD_FLAGS } from './lib/flags.js';

export const spec = defineVerb({
  name: 'create',
  summary: 'create a client of one of the seed types, fields checked before anything is sent',
  flags: {
    type: { type: 'string', value: 'type', help: 'the client type', choices: CLIENT_TYPES },
    clientId: { type: 'string', value: 'id', help: 'choose the client ID (default: a new one like 123456789012-….apps.mock)' },
    ...FIELD_FLAGS,
    customScheme: { type: 'boolean', help: 'mobile_a: enable custom URI scheme (advanced setting; off by default)' },
    integrity: { type: 'boolean', help: 'mobile_b: enable the integrity check (needs --team-id and a bundle ID without *)' },
    showSecret: { type: 'boolean', help: 'print the client secret (desktop types; shown at creation only)' },
  },
  examples: [
    'opsctl mock clients create --type desktop --name "CLI" --show-secret',
    'opsctl mock clients create --type universal_desktop --name "Store app" --store-id 9NBLGGH4NNS1',
    'opsctl mock clients create --type mobile_a --name Android --package-name com.example.app --sha1-fingerprint DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09',
    'opsctl mock clients create --type extension --name Ext --item-id abcdefghijklmnopabcdefghijklmnop',
  ],
  load: (): RunModule => import('./clients-create.js'),
});

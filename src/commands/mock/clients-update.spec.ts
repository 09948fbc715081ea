import { defineVerb, type RunModule } from '../spec.js';
import { CLIENT_ARG, FIELD_FLAGS } from './lib/flags.js';

export const spec = defineVerb({
  name: 'update',
  args: [CLIENT_ARG],
  summary: 'change fields of a client (checked against its type first)',
  flags: {
    ...FIELD_FLAGS,
    customScheme: { type: 'string', value: 'on|off', help: 'mobile_a: the "enable custom URI scheme" advanced setting' },
    clear: { type: 'list', value: 'field', repeat: true, help: 'clear an optional field: store-id, team-id (repeatable)' },
  },
  examples: ['opsctl mock clients update 1234-abc.apps.mock --custom-scheme on', 'opsctl mock clients update 1234-abc.apps.mock --team-id ABCDE12345'],
  load: (): RunModule => import('./clients-update.js'),
});

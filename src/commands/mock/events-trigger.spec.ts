import { defineVerb, type RunModule } from '../spec.js';
import { EVENT_KINDS_HELP } from './lib/flags.js';

export const spec = defineVerb({
  name: 'trigger',
  args: ['<event>'],
  summary: `make something happen to an account and send its SETs: ${EVENT_KINDS_HELP.join(' | ')}`,
  flags: {
    user: { type: 'string', value: 'email|sub', help: 'the account', required: true },
    clientId: { type: 'string', value: 'id', help: 'token-revoked: the client whose refresh tokens the user revokes' },
    reason: { type: 'string', value: 'reason', help: 'account-disabled: why', choices: ['hijacking', 'bulk-account'] },
  },
  examples: [
    'opsctl mock events trigger sessions-revoked --user alice@example.com',
    'opsctl mock events trigger token-revoked --user bob@example.com --client-id opsctl-desktop.apps.mock',
  ],
  load: (): RunModule => import('./events-trigger.js'),
});

import { defineVerb, type RunModule } from '../spec.js';
import { EVENT_KINDS_HELP } from './lib/flags.js';

export const spec = defineVerb({
  name: 'add',
  summary: "register a push receiver for a client's users",
  flags: {
    url: { type: 'string', value: 'url', help: 'the receiver endpoint (answers 202 to a POST of application/secevent+jwt)', required: true },
    clientId: { type: 'string', value: 'id', help: "the client (the SETs' aud) whose users' events it receives", required: true },
    events: { type: 'list', value: 'kinds', repeat: true, help: `only these (comma-separated): ${EVENT_KINDS_HELP.join(', ')}` },
  },
  examples: ['opsctl mock events receivers add --url http://127.0.0.1:9000/secevents --client-id opsctl-desktop.apps.mock --events account-disabled'],
  load: (): RunModule => import('./events-receivers-add.js'),
});

import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'forget-token',
  summary: 'forget a stored service credential (the tracker token of auth store-token --with-token); OAuth accounts sign out with opsctl logout',
  flags: {
    service: { type: 'string', value: 'service', help: 'the service whose credential to forget', choices: ['tracker'], required: true },
    all: { type: 'boolean', help: "every profile's stored token, not only this profile's" },
  },
  examples: [
    'opsctl auth forget-token --service tracker',
    'opsctl auth forget-token --service tracker --profile work',
    'opsctl auth forget-token --service tracker --all',
  ],
  load: (): RunModule => import('./forget-token.js'),
});

import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'logout',
  summary: 'forget a stored service credential (the tracker token of auth login --with-token); OAuth accounts sign out with opsctl logout',
  flags: {
    service: { type: 'string', value: 'service', help: 'the service whose credential to forget', choices: ['tracker'], required: true },
    all: { type: 'boolean', help: "every profile's stored token, not only this profile's" },
  },
  examples: ['opsctl auth logout --service tracker', 'opsctl auth logout --service tracker --profile work', 'opsctl auth logout --service tracker --all'],
  load: (): RunModule => import('./logout.js'),
});

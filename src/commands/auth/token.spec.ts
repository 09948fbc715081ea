import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'token',
  summary: 'print a valid OAuth access token for scripts (refreshed first when less than 5 minutes remain); --json adds expiry and scopes',
  flags: {
    account: { type: 'string', value: 'account', help: 'a signed-in account other than the active one' },
    idToken: {
      type: 'boolean',
      help: 'print the ID token instead (for a service that checks its audience); renewed first when it is about to expire',
    },
    refreshToken: { type: 'boolean', help: "print the refresh token instead (a CI job's OPSCTL_REFRESH_TOKEN); handle it like a password" },
  },
  examples: [
    'curl -H "Authorization: Bearer $(opsctl auth token)" "$API/media/v3/channels?part=id&mine=true"',
    'opsctl auth token --account bob@example.com --json',
    'curl -H "Authorization: Bearer $(opsctl auth token --id-token)" https://internal.example/   # a service that checks the ID token\'s audience',
  ],
  load: (): RunModule => import('./token.js'),
});

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
    adc: {
      type: 'string',
      value: 'file',
      help: "write a credentials file in gcloud's application-default shape instead (authorized_user; external_account for a keyless CI job with OPSCTL_OIDC_TOKEN_FILE), mode 0600",
    },
  },
  examples: [
    'curl -H "Authorization: Bearer $(opsctl auth token)" "$API/media/v3/channels?part=id&mine=true"',
    'opsctl auth token --account bob@example.com --json',
    'opsctl auth token --adc adc.json && GOOGLE_APPLICATION_CREDENTIALS=adc.json some-tool   # credentials other tools read',
    'curl -H "Authorization: Bearer $(opsctl auth token --id-token)" https://internal.example/   # a service that checks the ID token\'s audience',
  ],
  load: (): RunModule => import('./token.js'),
});

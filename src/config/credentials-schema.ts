/**
 * The shape of credentials.json: profile name → {tracker?: {token}, oauth?: {access_token, …}}; extra
 * keys pass. Checked by hand rather than with zod: every command that sends a credential reads this
 * file, and loading the schema library would cost each of them more than the rest of its start-up.
 */
type Check = [path: string, ok: (v: unknown) => boolean, expected: string];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = (ok: (v: unknown) => boolean) => (v: unknown) => v === undefined || ok(v);
const nonEmptyString = (v: unknown) => typeof v === 'string' && v.length > 0;
const finiteNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

/** The first problem of a credential file's content as `path: expected …` (never quoting a value), or undefined. */
export function credentialFileProblem(data: unknown): string | undefined {
  if (!isObject(data)) return 'is not a JSON object of profiles';
  for (const [name, profile] of Object.entries(data)) {
    if (!isObject(profile)) return `is not valid at ${name}: expected an object`;
    const checks: Check[] = [
      ['tracker', optional(isObject), 'an object'],
      ['tracker.token', isObject(profile.tracker) ? nonEmptyString : () => true, 'a non-empty string'],
      ['oauth', optional(isObject), 'an object'],
    ];
    if (isObject(profile.oauth)) {
      checks.push(
        ['oauth.access_token', nonEmptyString, 'a non-empty string'],
        ['oauth.refresh_token', optional((v) => typeof v === 'string'), 'a string'],
        ['oauth.scope', optional((v) => typeof v === 'string'), 'a string'],
        ['oauth.expires_at', optional(finiteNumber), 'a number'],
        ['oauth.refresh_expires_at', optional(finiteNumber), 'a number'],
      );
    }
    if (profile.accounts !== undefined) {
      if (!Array.isArray(profile.accounts)) return `is not valid at ${name}.accounts: expected a list of accounts`;
      for (const [i, a] of profile.accounts.entries()) {
        const at = `${name}.accounts[${i}]`;
        if (!isObject(a)) return `is not valid at ${at}: expected an object`;
        if (!nonEmptyString(a.account)) return `is not valid at ${at}.account: expected a non-empty string`;
        if (a.storage !== undefined && a.storage !== 'file' && a.storage !== 'keyring') return `is not valid at ${at}.storage: expected "file" or "keyring"`;
        if (a.storage !== 'keyring' && !nonEmptyString(a.access_token)) return `is not valid at ${at}.access_token: expected a non-empty string`;
        for (const k of ['refresh_token', 'scope', 'issuer', 'client_id', 'token_url', 'revoke_url'])
          if (!optional((v) => typeof v === 'string')(a[k])) return `is not valid at ${at}.${k}: expected a string`;
        for (const k of ['expires_at', 'refresh_expires_at']) if (!optional(finiteNumber)(a[k])) return `is not valid at ${at}.${k}: expected a number`;
      }
    }
    checks.push(['active', optional(nonEmptyString), 'an account name'], ['client_secret', optional(isObject), 'an object']);
    for (const [path, ok, expected] of checks) {
      const value = path.split('.').reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), profile);
      if (!ok(value)) return `is not valid at ${name}.${path}: expected ${expected}`;
    }
  }
  return undefined;
}

import type { OAuthTokens, ProfileCredentials, StoredAccount } from '../config/credentials.js';
import { authServerId } from '../config/server-id.js';
import { EMBEDDED_PROFILE } from '../config/services.js';
import type { AccountDeps, Credentials, Env } from './deps.js';
import { AuthError, UsageError } from '../core/errors.js';

/**
 * Several signed-in accounts per profile, as gh keeps them: each bound to the authorization server that
 * minted its tokens, one of them active. Secrets go to the OS keyring when there is one, else stay in
 * the 0600 credential file (said once). A profile written by an older opsctl (one `oauth` sign-in) is
 * read as one account and moved into the list on the next write, with nothing lost.
 */

/** The accounts of one profile's credentials and the active one's name (an old single sign-in reads as one account). */
export function accountsOf(pc: ProfileCredentials): { accounts: StoredAccount[]; active?: string } {
  if (pc.accounts) {
    const active = pc.accounts.some((a) => a.account === pc.active) ? pc.active : pc.accounts[0]?.account;
    return { accounts: pc.accounts, active };
  }
  if (pc.oauth?.access_token) {
    const account = { ...pc.oauth, account: pc.oauth.account ?? 'default', storage: 'file' as const };
    return { accounts: [account], active: account.account };
  }
  return { accounts: [] };
}

/**
 * The account the profile uses at the server it signs in at now (`here`). Sign-ins are kept per server: a
 * login at another server (OPSCTL_AUTH_URL, OPSCTL_ISSUER) is kept beside the profile's own, so a command
 * with the override uses the one and a command without it the other. Named: that account, the one bound
 * here first. Unnamed: the active account where it is bound here, else the newest account bound here,
 * else the active one (which assertBoundHere refuses, naming both servers).
 */
export function accountHere(
  accounts: StoredAccount[],
  name: string | undefined,
  active: string | undefined,
  here: string | undefined,
): StoredAccount | undefined {
  const bound = (a: StoredAccount) => !a.issuer || here === undefined || a.issuer === here;
  if (name !== undefined) {
    const named = accounts.filter((a) => a.account === name);
    return named.find(bound) ?? named[0];
  }
  const act = accounts.filter((a) => a.account === active);
  return act.find(bound) ?? [...accounts].reverse().find(bound) ?? act[0];
}

/** The server the profile signs in at now: its settings with the environment's overrides. */
export async function serverHere(ctx: AccountDeps, profile: string): Promise<string | undefined> {
  return authServerId(ctx.env, profile, (await ctx.config()).profile(profile));
}

/** The same sign-in: one account at one server (a record written before issuers were kept matches any server). */
const sameSignIn = (a: { account: string; issuer?: string }, b: { account: string; issuer?: string }) =>
  a.account === b.account && (a.issuer === b.issuer || !a.issuer || !b.issuer);

/** The keyring entry of an account's tokens. */
function keyringKey(profile: string, a: { account: string; issuer?: string }): string {
  return `oauth:${profile}:${a.issuer ?? '-'}:${a.account}`;
}

interface TokenSecrets {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
}

/** The commands (contexts) that said the keyring notice already: at most once per command. */
const noticed = new WeakSet<object>();

/**
 * The keyring when there is one (unless `insecure`); otherwise undefined, said on stderr once per profile:
 * a profile that keeps secrets in the credential file already was told so when the first one went there.
 */
async function usableKeyring(
  ctx: AccountDeps,
  { insecure, profile }: { insecure: boolean; profile: string },
): Promise<import('../config/secrets.js').Keyring | undefined> {
  if (insecure) return undefined;
  const { openKeyring } = await import('../config/secrets.js');
  const probe = await openKeyring(ctx.env);
  if ('keyring' in probe) return probe.keyring;
  if (!(await keepsSecretsInFile(ctx, profile))) fallbackNotice(ctx, probe.unavailable);
  return undefined;
}

/** Whether the profile already keeps a secret (an account's tokens, the client secret) in the credential file. */
async function keepsSecretsInFile(ctx: AccountDeps, profile: string): Promise<boolean> {
  const stored = await (await ctx.credentials()).get(profile).catch(() => undefined);
  if (!stored) return false;
  return stored.client_secret?.storage === 'file' || accountsOf(stored).accounts.some((a) => a.storage !== 'keyring');
}

function fallbackNotice(ctx: AccountDeps, why: string): void {
  if (noticed.has(ctx)) return;
  noticed.add(ctx);
  ctx.io.warn(
    `no OS keyring available (${why}): storing secrets in the credential file (mode 0600) instead. Pass --insecure-storage to choose the file without this notice.`,
  );
}

/** Stores `secrets` in the keyring; false (said once) when the keyring refused, so the caller keeps them in the file. */
async function keyringWrite(
  ctx: AccountDeps,
  keyring: import('../config/secrets.js').Keyring | undefined,
  key: string,
  secrets: TokenSecrets | string,
): Promise<boolean> {
  if (!keyring) return false;
  try {
    await keyring.set(key, typeof secrets === 'string' ? secrets : JSON.stringify(secrets));
    return true;
  } catch (err) {
    const { keyringProblem } = await import('../config/secrets.js');
    fallbackNotice(ctx, `the keyring refused the write: ${keyringProblem(err)}`);
    return false;
  }
}

async function keyringDelete(ctx: AccountDeps, key: string): Promise<void> {
  const { openKeyring, keyringProblem } = await import('../config/secrets.js');
  const probe = await openKeyring(ctx.env);
  if (!('keyring' in probe)) return ctx.io.warn(`could not remove ${key} from the OS keyring (${probe.unavailable}); remove it with your keyring's tool`);
  await probe.keyring.delete(key).catch((err: unknown) => ctx.io.warn(`could not remove ${key} from the OS keyring (${keyringProblem(err)})`));
}

/** An account with its tokens (read from the keyring when they are kept there). */
export async function withSecrets(ctx: AccountDeps, profile: string, a: StoredAccount): Promise<OAuthTokens & { account: string }> {
  if (a.storage !== 'keyring') return a as OAuthTokens & { account: string };
  const { openKeyring, keyringProblem } = await import('../config/secrets.js');
  const probe = await openKeyring(ctx.env);
  const fix = {
    code: 'keyring',
    hint: `start your keyring (Secret Service) and try again, or sign in again storing the tokens in a file: opsctl login --insecure-storage`,
  };
  if (!('keyring' in probe))
    throw new AuthError(`the tokens of ${a.account} (profile ${profile}) are in the OS keyring, which cannot be reached: ${probe.unavailable}`, fix);
  let text: string | undefined;
  try {
    text = await probe.keyring.get(keyringKey(profile, a));
  } catch (err) {
    throw new AuthError(`the tokens of ${a.account} (profile ${profile}) are in the OS keyring, which refused to give them: ${keyringProblem(err)}`, fix);
  }
  let secrets: Partial<TokenSecrets> | undefined;
  try {
    secrets = text === undefined ? undefined : (JSON.parse(text) as Partial<TokenSecrets>);
  } catch {
    secrets = undefined;
  }
  if (typeof secrets?.access_token !== 'string' || !secrets.access_token) {
    throw new AuthError(`the OS keyring holds no tokens for ${a.account} (profile ${profile}): they were removed outside opsctl`, {
      code: 'keyring',
      hint: 'run: opsctl login',
    });
  }
  return { ...a, access_token: secrets.access_token, refresh_token: secrets.refresh_token, id_token: secrets.id_token };
}

/** Every account of a profile (without secrets) and the active one's name. */
export async function listAccounts(ctx: AccountDeps, profile: string): Promise<{ accounts: StoredAccount[]; active?: string }> {
  return accountsOf(await (await ctx.credentials()).get(profile));
}

/** The account `name` (default: the active one) of the profile, with its tokens; undefined when none is signed in. */
export async function accountTokens(ctx: AccountDeps, profile: string, name?: string): Promise<(OAuthTokens & { account: string }) | undefined> {
  const { accounts, active } = await listAccounts(ctx, profile);
  const found = accountHere(accounts, name, active, await serverHere(ctx, profile));
  if (!found) {
    if (name !== undefined) throw unknownAccount(profile, name, accounts);
    return undefined;
  }
  return withSecrets(ctx, profile, found);
}

export function unknownAccount(profile: string, name: string, accounts: StoredAccount[]): UsageError {
  return new UsageError(
    `no account "${name}" is signed in on profile ${profile}${accounts.length ? ` (accounts: ${accounts.map((a) => a.account).join(', ')})` : ''}`,
    {
      code: 'unknown_account',
      field: 'account',
      hint: accounts.length ? 'name one of those accounts (opsctl auth list), or sign in as this one: opsctl login' : 'sign in first: opsctl login',
    },
  );
}

/**
 * Refuses an account whose tokens another authorization server minted than the one the profile signs
 * in at now (the auth endpoint or issuer changed): exit 4 naming both, so no token reaches the other one.
 */
export async function assertBoundHere(ctx: AccountDeps, profile: string, a: { account: string; issuer?: string }): Promise<void> {
  if (!a.issuer) return;
  const here = authServerId(ctx.env, profile, (await ctx.config()).profile(profile));
  if (here === undefined || here === a.issuer) return;
  throw issuerMismatch(profile, a, here);
}

export function issuerMismatch(profile: string, a: { account: string; issuer?: string }, here: string): AuthError {
  const show = (id: string | undefined) => (id === EMBEDDED_PROFILE ? 'the embedded mock' : (id ?? 'an unknown server'));
  return new AuthError(
    `the stored sign-in of ${a.account} (profile ${profile}) belongs to the other issuer ${show(a.issuer)}; profile ${profile} now signs in at ${show(here)}`,
    {
      code: 'issuer_mismatch',
      hint: `run: opsctl login   (signs in at ${show(here)}, kept beside the sign-in at ${show(a.issuer)}: each is used where the profile points; the tokens of one are never sent to the other)`,
    },
  );
}

/**
 * Adds (or replaces) an account and makes it active. Its tokens go to the keyring unless `insecure`
 * or there is none. Returns the replaced sign-in of the same account at the same server, with its tokens.
 */
export async function saveAccount(
  ctx: AccountDeps,
  profile: string,
  tokens: OAuthTokens,
  opts: { insecure?: boolean } = {},
): Promise<{ previous?: OAuthTokens; storage: 'file' | 'keyring' }> {
  const name = tokens.account ?? 'default';
  const existing = (await listAccounts(ctx, profile)).accounts.find((a) => a.account === name && a.issuer === tokens.issuer);
  const previous = existing ? await withSecrets(ctx, profile, existing).catch(() => undefined) : undefined;
  const keyring = await usableKeyring(ctx, { insecure: Boolean(opts.insecure), profile });
  let storage: 'file' | 'keyring' = 'file';
  await (
    await ctx.credentials()
  ).update(profile, async (c) => {
    const { accounts } = accountsOf(c);
    const record: StoredAccount = { ...tokens, account: name };
    const secrets: TokenSecrets = { access_token: tokens.access_token, refresh_token: tokens.refresh_token, id_token: tokens.id_token };
    if (await keyringWrite(ctx, keyring, keyringKey(profile, record), secrets)) {
      storage = 'keyring';
      delete record.access_token;
      delete record.refresh_token;
      delete record.id_token;
    }
    record.storage = storage;
    // (the same account at another server is kept: sign-ins are per server)
    const rest = accounts.filter((a) => !sameSignIn(a, { account: name, issuer: tokens.issuer }));
    const { oauth: _old, ...others } = c;
    return { ...others, accounts: [...rest, record], active: name };
  });
  // The same account signed in before at another server, or in the other store: drop its keyring copy.
  if (existing?.storage === 'keyring' && storage === 'file') await keyringDelete(ctx, keyringKey(profile, existing));
  return { previous, storage };
}

/**
 * Stores refreshed tokens of an account, unless another process changed that account while the refresh
 * was on the wire. Returns null when stored, else what is stored now (undefined: signed out meanwhile).
 */
export async function storeRefreshed(
  ctx: AccountDeps,
  profile: string,
  before: OAuthTokens & { account: string },
  next: OAuthTokens,
): Promise<(OAuthTokens & { account: string }) | undefined | null> {
  let outcome: StoredAccount | undefined | null = null;
  await (
    await ctx.credentials()
  ).update(profile, async (c) => {
    const { accounts, active } = accountsOf(c);
    const current = accounts.find((a) => sameSignIn(a, before));
    if (!current || current.obtained_at !== before.obtained_at || current.issuer !== before.issuer) {
      outcome = current;
      return c;
    }
    const record: StoredAccount = { ...next, account: before.account, storage: current.storage };
    if (current.storage === 'keyring') {
      const { openKeyring } = await import('../config/secrets.js');
      const probe = await openKeyring(ctx.env);
      const secrets: TokenSecrets = { access_token: next.access_token, refresh_token: next.refresh_token, id_token: next.id_token };
      if ('keyring' in probe && (await keyringWrite(ctx, probe.keyring, keyringKey(profile, record), secrets))) {
        delete record.access_token;
        delete record.refresh_token;
        delete record.id_token;
      } else record.storage = 'file';
    }
    const { oauth: _old, ...others } = c;
    return { ...others, accounts: accounts.map((a) => (a === current ? record : a)), active };
  });
  if (outcome === null) return null;
  return outcome ? withSecrets(ctx, profile, outcome) : undefined;
}

/** Forgets an account (its keyring entry too); the next one becomes active. Returns the new active account. */
export async function removeAccount(ctx: AccountDeps, profile: string, a: StoredAccount): Promise<string | undefined> {
  let nowActive: string | undefined;
  await (
    await ctx.credentials()
  ).update(profile, (c) => {
    const { accounts, active } = accountsOf(c);
    const rest = accounts.filter((x) => !(x.account === a.account && x.issuer === a.issuer));
    nowActive = active === a.account && !rest.some((x) => x.account === a.account) ? rest[0]?.account : active;
    const { oauth: _old, accounts: _a, active: _b, ...others } = c;
    return rest.length ? { ...others, accounts: rest, active: nowActive } : others;
  });
  if (a.storage === 'keyring') await keyringDelete(ctx, keyringKey(profile, a));
  return nowActive;
}

/** Makes `name` the active account of the profile. */
export async function switchAccount(ctx: AccountDeps, profile: string, name: string): Promise<void> {
  await (
    await ctx.credentials()
  ).update(profile, (c) => {
    const { accounts } = accountsOf(c);
    if (!accounts.some((a) => a.account === name)) throw unknownAccount(profile, name, accounts);
    const { oauth: _old, ...others } = c;
    return { ...others, accounts, active: name };
  });
}

/** Stores a client secret for the profile: the keyring when there is one, else the credential file. */
export async function saveClientSecret(ctx: AccountDeps, profile: string, value: string): Promise<'file' | 'keyring'> {
  const keyring = await usableKeyring(ctx, { insecure: false, profile });
  let storage: 'file' | 'keyring' = 'file';
  await (
    await ctx.credentials()
  ).update(profile, async (c) => {
    storage = (await keyringWrite(ctx, keyring, `client_secret:${profile}`, value)) ? 'keyring' : 'file';
    return { ...c, client_secret: storage === 'keyring' ? { storage } : { storage, value } };
  });
  return storage;
}

/** The profile's stored client secret (undefined when none is stored). */
export async function storedClientSecret(ctx: Env & Credentials, profile: string): Promise<string | undefined> {
  const stored = (await (await ctx.credentials()).get(profile)).client_secret;
  if (!stored) return undefined;
  if (stored.storage === 'file') return stored.value;
  const { openKeyring, keyringProblem } = await import('../config/secrets.js');
  const probe = await openKeyring(ctx.env);
  const hint = `start your keyring and try again, or store it again: opsctl config set client_secret VALUE --profile ${profile}`;
  if (!('keyring' in probe))
    throw new AuthError(`the client secret of profile ${profile} is in the OS keyring, which cannot be reached: ${probe.unavailable}`, {
      code: 'keyring',
      hint,
    });
  const value = await probe.keyring.get(`client_secret:${profile}`).catch((err: unknown) => {
    throw new AuthError(`the OS keyring refused the client secret of profile ${profile}: ${keyringProblem(err)}`, { code: 'keyring', hint });
  });
  return value;
}

/** Removes the profile's stored client secret. */
export async function removeClientSecret(ctx: AccountDeps, profile: string): Promise<boolean> {
  let had: ProfileCredentials['client_secret'];
  await (
    await ctx.credentials()
  ).update(profile, (c) => {
    had = c.client_secret;
    const { client_secret: _gone, ...rest } = c;
    return rest;
  });
  if (had?.storage === 'keyring') await keyringDelete(ctx, `client_secret:${profile}`);
  return had !== undefined;
}

export interface AccountRow {
  profile: string;
  account: string;
  issuer: string | null;
  scopes: string[];
  expires_at: string | null;
  active: boolean;
  storage: 'file' | 'keyring';
  /** `ok`, or why this account cannot be used now: `other_issuer` (the profile signs in elsewhere) or `ended`. */
  state: 'ok' | 'other_issuer' | 'ended';
}

/** A row per account of the given profiles (default: every profile with a sign-in), without reading any secret. */
export async function accountRows(ctx: AccountDeps, profiles?: string[]): Promise<AccountRow[]> {
  const all = await (await ctx.credentials()).read();
  const config = await ctx.config();
  const names = profiles ?? Object.keys(all).sort();
  const now = ctx.now();
  return names.flatMap((profile) => {
    const pc = Object.prototype.hasOwnProperty.call(all, profile) ? all[profile] : undefined;
    const { accounts, active } = accountsOf(pc ?? {});
    const here = authServerId(ctx.env, profile, config.profile(profile));
    return accounts.map((a) => ({
      profile,
      account: a.account,
      issuer: a.issuer ?? null,
      scopes: (a.scope ?? '').split(/\s+/).filter(Boolean),
      expires_at: a.expires_at === undefined ? null : new Date(a.expires_at).toISOString(),
      active: a.account === active,
      storage: a.storage ?? 'file',
      state:
        a.issuer && here !== undefined && here !== a.issuer
          ? 'other_issuer'
          : a.refresh_expires_at !== undefined && a.refresh_expires_at <= now
            ? 'ended'
            : 'ok',
    }));
  });
}

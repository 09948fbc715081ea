import { checkOwnDirSync, checkOwnFileSync, readOwnFileSync } from '../core/local-file.js';
import { join } from 'node:path';
import type Conf from 'conf';
import { OpsError, UsageError, ValidationError } from '../core/errors.js';
import { dirError, ensurePrivateDir } from './paths.js';
import { EMBEDDED_PROFILE, LABEL_API_VERSIONS, TRACKER_TOKEN_HEADERS } from './services.js';
import { parseRate } from '../core/pacer.js';

/**
 * Profiles: an endpoint per service plus OAuth client settings, stored with `conf` in config.json.
 * Keys are flat per profile so `opsctl config set tracker https://…` reads naturally.
 *
 * Reads parse config.json directly (conf's format is plain JSON) because conf's import pulls in a
 * JSON-schema compiler that would cost every command ~20 ms; writes go through conf.
 */
type Kind = 'url' | 'issuer' | 'text' | 'rate' | 'token-header' | 'labels-version';

/** Every key a profile may hold. Later features add theirs here. */
export const PROFILE_KEYS = {
  issuer: { kind: 'issuer', help: 'OpenID Connect / OAuth 2.0 issuer: endpoints come from its metadata (any provider)' },
  auth: { kind: 'url', help: 'authorization server base URL, Google-shaped (serves /o/oauth2/v2/auth); not needed with issuer' },
  authorize_url: { kind: 'url', help: 'authorization endpoint (default: from the issuer, else <auth>/o/oauth2/v2/auth)' },
  token_url: { kind: 'url', help: 'token endpoint (default: from the issuer, else <auth>/token)' },
  revoke_url: { kind: 'url', help: 'revocation endpoint (default: from the issuer, else <auth>/revoke)' },
  userinfo_url: { kind: 'url', help: 'userinfo endpoint (default: from the issuer)' },
  jwks_uri: { kind: 'url', help: "the key set that signs ID tokens (default: from the issuer's metadata)" },
  api: { kind: 'url', help: 'data API base URL' },
  tracker: { kind: 'url', help: 'work-tracker base URL (serves /api/v3)' },
  labels: { kind: 'url', help: 'label service base URL (serves /v2, or /v2beta with labels_version)' },
  client_id: { kind: 'text', help: 'OAuth client id' },
  client_secret: {
    kind: 'text',
    help: 'OAuth client secret (installed apps: not confidential); kept in the OS keyring or the 0600 credential file, never in config.json',
  },
  scopes: { kind: 'text', help: 'default scopes for opsctl login, space-separated' },
  tracker_rate_limit: { kind: 'rate', help: 'client-side pacing for the tracker, e.g. 200/1m' },
  tracker_token_header: { kind: 'token-header', help: 'header that carries the tracker token: Shortcut-Token or Tracker-Token (default: by host)' },
  labels_version: { kind: 'labels-version', help: "label service API version: v2 (default, Google's current) or v2beta" },
} as const satisfies Record<string, { kind: Kind; help: string }>;

export type ProfileKey = keyof typeof PROFILE_KEYS;
export type Profile = Partial<Record<ProfileKey, string>>;

interface ConfigShape {
  profile?: string;
  profiles: Record<string, Profile>;
}

/** config.json holds profiles: a megabyte is far more than any real one. */
const CONFIG_MAX_BYTES = 1024 * 1024;

const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

export class ConfigStore {
  readonly path: string;
  private cache?: ConfigShape;
  private confInstance?: Conf<ConfigShape>;

  /** @param signal ends a wait for the file's lock (the command's Ctrl-C / SIGTERM). */
  constructor(
    private readonly dir: string,
    private readonly signal?: AbortSignal,
  ) {
    this.path = join(dir, 'config.json');
  }

  private data(): ConfigShape {
    if (!this.cache) {
      let text: string | undefined;
      // Another user's directory (or one others can write) is refused before anything in it is used:
      // its config could name their endpoints, and a token (OPSCTL_TRACKER_TOKEN…) would be sent there.
      checkOwnDirSync(this.dir, 'the config directory');
      try {
        // A link, another user's file, or one others can write: refused (exit 1), never followed or rewritten.
        text = readOwnFileSync(this.path, { what: 'the config file', maxBytes: CONFIG_MAX_BYTES });
      } catch (err) {
        if (err instanceof OpsError) throw err;
        // ENOTDIR: a file where a directory of the path should be; there is no config (writes say why).
        if (!['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? ''))
          throw this.unusable(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
      if (text === undefined) this.cache = { profiles: {} };
      else {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (err) {
          throw this.unusable(`is not valid JSON (${(err as Error).message.split('\n')[0]})`);
        }
        const problem = configProblem(parsed);
        if (problem) throw this.unusable(problem);
        const shape = parsed as Partial<ConfigShape>;
        this.cache = { ...shape, profiles: shape.profiles ?? {} };
      }
    }
    return this.cache;
  }

  /** config.json cannot be used: exit 1 naming it; it is never rewritten (conf would reset it). */
  private unusable(problem: string): OpsError {
    return new OpsError(`the config file ${this.path} ${problem}`, 1, {
      code: 'config_file',
      hint: `opsctl leaves it untouched: fix it, or move it aside (mv ${this.path} ${this.path}.bad) and set your profiles again with opsctl config set`,
    });
  }

  private async conf(): Promise<Conf<ConfigShape>> {
    if (!this.confInstance) {
      const { default: ConfClass } = await import('conf');
      this.confInstance = new ConfClass<ConfigShape>({
        projectName: 'opsctl',
        projectSuffix: '',
        cwd: this.dir,
        configName: 'config',
        defaults: { profiles: {} },
        // the README promises 0600 whatever the umask (conf's default is 0666 less the umask)
        configFileMode: 0o600,
      });
    }
    this.cache = undefined;
    return this.confInstance;
  }

  /** The active profile: --profile, then OPSCTL_PROFILE, then the stored default, then `embedded`. */
  activeProfile(flag?: string, env: NodeJS.ProcessEnv = {}): string {
    const name = flag ?? env.OPSCTL_PROFILE ?? this.data().profile ?? EMBEDDED_PROFILE;
    if (!PROFILE_NAME.test(name)) throw new ValidationError('--profile', `"${name}" is not a valid profile name`, 'use letters, digits, - and _');
    return name;
  }

  profile(name: string): Profile {
    return { ...(this.data().profiles[name] ?? {}) };
  }

  profiles(): Record<string, Profile> {
    return this.data().profiles;
  }

  get(profile: string, key: string): string | undefined {
    if (key === 'profile') return this.data().profile;
    assertKey(key);
    return this.profile(profile)[key];
  }

  async set(profile: string, key: string, value: string): Promise<void> {
    if (key === 'profile') {
      if (!PROFILE_NAME.test(value)) throw new ValidationError('profile', `"${value}" is not a valid profile name`, 'use letters, digits, - and _');
      const known = [EMBEDDED_PROFILE, ...Object.keys(this.profiles()).filter((n) => n !== EMBEDDED_PROFILE)];
      if (!known.includes(value)) {
        throw new UsageError(`profile "${value}" does not exist (profiles: ${known.join(', ')})`, {
          code: 'unknown_profile',
          field: 'profile',
          hint: `create it by giving it an endpoint first, e.g.: opsctl config set tracker https://… --profile ${value}`,
        });
      }
      await this.writing(async () => (await this.conf()).set('profile', value));
      return;
    }
    assertKey(key);
    if (key === 'client_secret') {
      // A secret never goes to config.json: `opsctl config set client_secret` stores it in the keyring or the credential file.
      throw new UsageError('client_secret is a secret and is never written to config.json', {
        field: 'client_secret',
        hint: 'run: opsctl config set client_secret VALUE (stored in the OS keyring or the 0600 credential file)',
      });
    }
    const problem = checkValue(PROFILE_KEYS[key].kind, value);
    if (problem) throw new ValidationError(key, problem);
    await this.writing(async () => {
      const conf = await this.conf();
      const profiles = conf.get('profiles');
      profiles[profile] = { ...(profiles[profile] ?? {}), [key]: value };
      conf.set('profiles', profiles);
    });
  }

  async unset(profile: string, key: string): Promise<void> {
    if (key !== 'profile') assertKey(key);
    await this.writing(async () => {
      const conf = await this.conf();
      if (key === 'profile') return conf.delete('profile');
      const profiles = conf.get('profiles');
      if (profiles[profile]) {
        delete profiles[profile][key];
        conf.set('profiles', profiles);
      }
    });
  }

  /**
   * A write of config.json: a read-modify-write under the lock every local file of opsctl takes
   * (core/lock.ts), so that parallel `config set`s never lose each other's change. conf re-reads the
   * file for every get, so `fn` works on what is there once the lock is held. A directory opsctl cannot
   * write is named with the way out.
   */
  private async writing(fn: () => Promise<void>): Promise<void> {
    // A file opsctl cannot read or trust is refused before conf sees it (conf would throw, or replace it).
    this.data();
    let release: (() => Promise<void>) | undefined;
    try {
      await ensurePrivateDir(this.dir);
      // conf's module is loaded before the lock: a busy machine spends no load time while others wait.
      const [{ lockFile }] = await Promise.all([import('../core/lock.js'), import('conf')]);
      release = await lockFile(this.path, { what: 'the config file', signal: this.signal });
      // Under the lock: what is there now (another process may have changed or replaced it) is checked again.
      this.cache = undefined;
      this.data();
      checkOwnFileSync(this.path, 'the config file');
      await fn();
      // conf rewrites an existing file in place when it cannot rename: its mode is then the old one
      const { chmod } = await import('node:fs/promises');
      await chmod(this.path, 0o600);
    } catch (err) {
      throw dirError(this.dir, err);
    } finally {
      this.cache = undefined;
      await release?.();
    }
  }
}

function checkValue(kind: Kind, value: string): string | undefined {
  if (kind === 'text') return value.trim() ? undefined : 'must not be empty';
  if (kind === 'token-header') {
    return TRACKER_TOKEN_HEADERS.some((h) => h.toLowerCase() === value.toLowerCase()) ? undefined : `must be one of ${TRACKER_TOKEN_HEADERS.join(', ')}`;
  }
  if (kind === 'labels-version')
    return (LABEL_API_VERSIONS as readonly string[]).includes(value) ? undefined : `must be one of ${LABEL_API_VERSIONS.join(', ')}`;
  if (kind === 'rate') return parseRate(value) ? undefined : 'must look like 200/1m (requests per window)';
  // RFC 8414 §2: an issuer has no query or fragment (it is compared with the provider's metadata as written).
  if (kind === 'issuer' && (value.includes('?') || value.includes('#')))
    return 'must be the issuer URL without a query or fragment, e.g. https://sso.example.com/realms/ops';
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:' ? undefined : 'must be an http(s) URL, e.g. https://api.example.com';
  } catch {
    return 'must be an http(s) URL, e.g. https://api.example.com';
  }
}

function assertKey(key: string): asserts key is ProfileKey {
  if (!Object.hasOwn(PROFILE_KEYS, key)) {
    throw new UsageError(`unknown config key "${key}"`, {
      field: 'key',
      hint: `known keys: profile, ${Object.keys(PROFILE_KEYS).join(', ')}`,
    });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first problem of config.json's content (`{profile?: string, profiles: {NAME: {key: string}}}`), or undefined. */
function configProblem(data: unknown): string | undefined {
  if (!isObject(data)) return 'is not a JSON object';
  if (data.profile !== undefined && typeof data.profile !== 'string') return 'is not valid at profile: expected a profile name (a string)';
  if (data.profiles === undefined) return undefined;
  if (!isObject(data.profiles)) return 'is not valid at profiles: expected an object of profiles';
  for (const [name, profile] of Object.entries(data.profiles)) {
    if (!isObject(profile)) return `is not valid at profiles.${name}: expected an object of settings`;
    for (const [key, value] of Object.entries(profile)) if (typeof value !== 'string') return `is not valid at profiles.${name}.${key}: expected a string`;
  }
  return undefined;
}

import Conf from 'conf';
import { z } from 'zod';
import { UsageError, ValidationError } from '../core/errors.js';
import { EMBEDDED_PROFILE, SERVICES } from './services.js';

/**
 * Profiles: an endpoint per service plus OAuth client settings, stored with `conf` in config.json.
 * Keys are flat per profile so `opsctl config set tracker https://…` reads naturally.
 */
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://api.example.com' });

/** Every key a profile may hold, with its validation. Later features add theirs here. */
export const PROFILE_KEYS = {
  auth: { schema: url, help: 'authorization server base URL (serves /o/oauth2/v2/auth)' },
  token_url: { schema: url, help: 'token endpoint (default: <auth>/token)' },
  revoke_url: { schema: url, help: 'revocation endpoint (default: <auth>/revoke)' },
  api: { schema: url, help: 'data API base URL' },
  tracker: { schema: url, help: 'work-tracker base URL (serves /api/v3)' },
  labels: { schema: url, help: 'label service base URL (serves /v2beta)' },
  client_id: { schema: z.string().min(1), help: 'OAuth client id' },
  client_secret: { schema: z.string().min(1), help: 'OAuth client secret (installed apps: not confidential)' },
  scopes: { schema: z.string().min(1), help: 'default scopes for opsctl login, space-separated' },
  tracker_rate_limit: {
    schema: z.string().regex(/^\d+\/\d+(ms|s|m)$/, 'must look like 200/1m (requests per window)'),
    help: 'client-side pacing for the tracker, e.g. 200/1m',
  },
} as const satisfies Record<string, { schema: z.ZodType; help: string }>;

export type ProfileKey = keyof typeof PROFILE_KEYS;
export type Profile = Partial<Record<ProfileKey, string>>;

interface ConfigShape {
  profile?: string;
  profiles: Record<string, Profile>;
}

const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

export class ConfigStore {
  private readonly conf: Conf<ConfigShape>;

  constructor(dir: string) {
    this.conf = new Conf<ConfigShape>({
      projectName: 'opsctl',
      projectSuffix: '',
      cwd: dir,
      configName: 'config',
      defaults: { profiles: {} },
    });
  }

  get path(): string {
    return this.conf.path;
  }

  /** The active profile: --profile, then OPSCTL_PROFILE, then the stored default, then `embedded`. */
  activeProfile(flag?: string, env: NodeJS.ProcessEnv = {}): string {
    const name = flag ?? env.OPSCTL_PROFILE ?? this.conf.get('profile') ?? EMBEDDED_PROFILE;
    if (!PROFILE_NAME.test(name)) throw new ValidationError('--profile', `"${name}" is not a valid profile name`, 'use letters, digits, - and _');
    return name;
  }

  profile(name: string): Profile {
    return { ...(this.conf.get('profiles')[name] ?? {}) };
  }

  profiles(): Record<string, Profile> {
    return this.conf.get('profiles');
  }

  get(profile: string, key: string): string | undefined {
    if (key === 'profile') return this.conf.get('profile');
    assertKey(key);
    return this.profile(profile)[key];
  }

  set(profile: string, key: string, value: string): void {
    if (key === 'profile') {
      if (!PROFILE_NAME.test(value)) throw new ValidationError('profile', `"${value}" is not a valid profile name`, 'use letters, digits, - and _');
      this.conf.set('profile', value);
      return;
    }
    assertKey(key);
    const parsed = PROFILE_KEYS[key].schema.safeParse(value);
    if (!parsed.success) throw new ValidationError(key, parsed.error.issues[0]?.message ?? 'invalid value');
    const profiles = this.conf.get('profiles');
    profiles[profile] = { ...(profiles[profile] ?? {}), [key]: value };
    this.conf.set('profiles', profiles);
  }

  unset(profile: string, key: string): void {
    if (key === 'profile') return this.conf.delete('profile');
    assertKey(key);
    const profiles = this.conf.get('profiles');
    if (profiles[profile]) {
      delete profiles[profile][key];
      this.conf.set('profiles', profiles);
    }
  }
}

function assertKey(key: string): asserts key is ProfileKey {
  if (!(key in PROFILE_KEYS)) {
    throw new UsageError(`unknown config key "${key}"`, {
      field: 'key',
      hint: `known keys: profile, ${Object.keys(PROFILE_KEYS).join(', ')}`,
    });
  }
}

export const ENDPOINT_KEYS = SERVICES;

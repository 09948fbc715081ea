import { mkdtempSync, readFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SettingsDeps } from '../../src/auth/deps.js';
import { oauthSettings } from '../../src/auth/settings.js';
import { CredentialStore } from '../../src/config/credentials.js';
import { ConfigStore } from '../../src/config/profiles.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-settings-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Only what oauthSettings takes (auth/deps.ts), built from the real stores: no command context, no server. */
function deps(env: NodeJS.ProcessEnv = {}): SettingsDeps & { warnings: string[] } {
  const config = new ConfigStore(dir);
  const credentials = new CredentialStore(dir);
  const warnings: string[] = [];
  return {
    warnings,
    env: { OPSCTL_CONFIG_DIR: dir, ...env },
    now: () => 0,
    paths: { data: join(dir, 'data') },
    io: { warn: (text: string) => void warnings.push(text) },
    debug: () => undefined,
    config: () => Promise.resolve(config),
    credentials: () => Promise.resolve(credentials),
    profileName: () => Promise.resolve('work'),
    profile: () => Promise.resolve(config.profile('work')),
    endpoint: () => Promise.resolve({ url: 'http://127.0.0.1:9', embedded: false, source: 'profile' }),
    http: () => Promise.reject(new Error('no request expected')),
  };
}

describe('reading the OAuth settings writes nothing', () => {
  it('a client_secret an older opsctl left in config.json is read as it is; config.json and the credential file stay untouched', async () => {
    const file = join(dir, 'config.json');
    const text = JSON.stringify({ profiles: { work: { auth: 'http://127.0.0.1:9', client_id: 'app-1', client_secret: 'old-s3cret' } } });
    writeFileSync(file, text, { mode: 0o600 });
    const d = deps();
    const settings = await oauthSettings(d);
    expect(settings.clientId).toBe('app-1');
    expect(settings.clientSecret).toBe('old-s3cret');
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
    expect(d.warnings).toEqual([]);
  });

  it('OPSCTL_CLIENT_SECRET still wins over config.json', async () => {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { work: { auth: 'http://127.0.0.1:9', client_id: 'app-1', client_secret: 'old' } } }), {
      mode: 0o600,
    });
    expect((await oauthSettings(deps({ OPSCTL_CLIENT_SECRET: 'from-env' }))).clientSecret).toBe('from-env');
  });
});

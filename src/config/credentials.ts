import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/** OAuth tokens as stored after `opsctl login`. */
export interface OAuthTokens {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  scope?: string;
  requested_scope?: string;
  id_token?: string;
  /** Epoch milliseconds. */
  expires_at?: number;
  refresh_expires_at?: number;
  account?: string;
  obtained_at?: number;
  /** The client and token endpoint the tokens were issued through (refresh and revoke use them). */
  client_id?: string;
  token_url?: string;
}

export interface ProfileCredentials {
  tracker?: { token: string };
  oauth?: OAuthTokens;
}

type CredentialFile = Record<string, ProfileCredentials>;

/**
 * Secrets, kept apart from config.json: one JSON file written 0600 (atomically) inside a 0700 directory.
 * Never printed, never logged.
 */
export class CredentialStore {
  readonly path: string;
  constructor(readonly dir: string) {
    this.path = join(dir, 'credentials.json');
  }

  async read(): Promise<CredentialFile> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as CredentialFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
  }

  async get(profile: string): Promise<ProfileCredentials> {
    return (await this.read())[profile] ?? {};
  }

  /**
   * Read-modify-write of one profile's credentials, under a cross-process lock so that two commands
   * (a refresh here, a login or logout there) never lose each other's change.
   */
  async update(profile: string, fn: (current: ProfileCredentials) => ProfileCredentials): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const { default: lockfile } = await import('proper-lockfile');
    const release = await lockfile.lock(this.path, {
      realpath: false,
      stale: 10_000,
      retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
    });
    try {
      const all = await this.read();
      const next = fn({ ...(all[profile] ?? {}) });
      if (Object.keys(next).length === 0) delete all[profile];
      else all[profile] = next;
      await writeFileAtomic(this.path, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    } finally {
      await release();
    }
  }
}

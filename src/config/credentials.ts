import { join } from 'node:path';
import { AuthError, OpsError } from '../core/errors.js';
import { checkOwnDirSync, checkOwnFileSync, ownIds, readOwnFile } from '../core/local-file.js';
import { dirError, ensurePrivateDir } from './paths.js';

/** OAuth tokens as stored after `opsctl login`. */
export interface OAuthTokens {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  scope?: string;
  requested_scope?: string;
  /** auth refresh --remove-scopes: every refresh asks for this narrower scope (RFC 6749 §6). */
  scope_limit?: string;
  id_token?: string;
  /** Epoch milliseconds. */
  expires_at?: number;
  refresh_expires_at?: number;
  account?: string;
  obtained_at?: number;
  /** The client and token endpoint the tokens were issued through (refresh and revoke use them). */
  client_id?: string;
  token_url?: string;
  revoke_url?: string;
  /** The authorization server that minted the tokens: its issuer, its auth URL, or `embedded`. Tokens go nowhere else. */
  issuer?: string;
  /** Where the secrets (access, refresh and ID token) live: in this file, or in the OS keyring (then absent here). */
  storage?: 'file' | 'keyring';
}

/** An account as kept in the file: with storage `keyring` its tokens are in the OS keyring, not here. */
export type StoredAccount = Omit<OAuthTokens, 'access_token'> & { account: string; access_token?: string };

export interface ProfileCredentials {
  tracker?: { token: string };
  /** One sign-in, as opsctl before several accounts stored it; moved into `accounts` on the next write. */
  oauth?: OAuthTokens;
  /** Every signed-in account of the profile (gh-style), and the active one's name. */
  accounts?: StoredAccount[];
  active?: string;
  /** The OAuth client secret (never in config.json); `keyring` when it is in the OS keyring. */
  client_secret?: { value?: string; storage: 'file' | 'keyring' };
}

type CredentialFile = Record<string, ProfileCredentials>;

/**
 * Secrets, kept apart from config.json: one JSON file written 0600 (atomically) inside a 0700 directory.
 * Never printed, never logged.
 */
export class CredentialStore {
  readonly path: string;
  /** @param signal ends a wait for the file's lock (the command's Ctrl-C / SIGTERM). */
  constructor(
    readonly dir: string,
    private readonly signal?: AbortSignal,
  ) {
    this.path = join(dir, 'credentials.json');
  }

  /** The whole file; a file that is not JSON or not of this shape is refused (and never rewritten). */
  async read(): Promise<CredentialFile> {
    let text: string;
    try {
      // Another user's directory or file, a link, or a file others can write: refused (exit 1), never followed.
      checkOwnDirSync(this.dir, 'the config directory');
      text = await readOwnFile(this.path, { what: 'the credential file', maxBytes: 1024 * 1024 });
    } catch (err) {
      if (err instanceof OpsError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return {};
      throw new CredentialsFileError(this.path, code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (err as Error).message})`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      // The parser's message may quote the file's content: a secret. Name the problem only.
      throw new CredentialsFileError(this.path, 'is not valid JSON');
    }
    const { credentialFileProblem } = await import('./credentials-schema.js');
    const problem = credentialFileProblem(data);
    if (problem) throw new CredentialsFileError(this.path, problem);
    return data as CredentialFile;
  }

  async get(profile: string): Promise<ProfileCredentials> {
    return (await this.read())[profile] ?? {};
  }

  /**
   * Read-modify-write of one profile's credentials, under a cross-process lock so that two commands
   * (a refresh here, a login or logout there) never lose each other's change.
   */
  async update(profile: string, fn: (current: ProfileCredentials) => ProfileCredentials | Promise<ProfileCredentials>): Promise<void> {
    await ensurePrivateDir(this.dir);
    // node:fs/promises, the lock and the atomic write load only for a write (a read needs none of them)
    const { chmod } = await import('node:fs/promises');
    await chmod(this.dir, 0o700).catch((err) => {
      throw dirError(this.dir, err);
    });
    const [{ lockFile, removeLeftoverTempFiles }, { default: writeFileAtomic }] = await Promise.all([import('../core/lock.js'), import('write-file-atomic')]);
    const release = await lockFile(this.path, { what: 'the credential file', signal: this.signal }).catch((err) => {
      throw dirError(this.dir, err);
    });
    try {
      await removeLeftoverTempFiles(this.path);
      const all = await this.read();
      const next = await fn({ ...(all[profile] ?? {}) });
      if (Object.keys(next).length === 0) delete all[profile];
      else all[profile] = next;
      // Checked again just before the replace (fn may have waited on a server): a link or another user's
      // file is refused, never written through; the new file is this user's (a root writer never hands it to another uid).
      checkOwnFileSync(this.path, 'the credential file');
      await writeFileAtomic(this.path, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600, chown: ownIds() }).catch((err) => {
        throw dirError(this.dir, err);
      });
    } finally {
      await release();
    }
  }
}

/** credentials.json cannot be used: exit 4 (sign-in needed), naming the file and the way out. The file is left as it is. */
export class CredentialsFileError extends AuthError {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`the credential file ${path} ${problem}`, {
      code: 'credentials_file',
      hint: `opsctl leaves it untouched. Move it aside (mv ${path} ${path}.bad), then sign in again: opsctl login (OAuth) or opsctl auth store-token --service tracker --with-token (tracker)`,
    });
  }
}

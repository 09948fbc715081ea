import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import type { CredentialStore } from './config/credentials.js';
import { resolvePaths, type OpsctlPaths } from './config/paths.js';
import type { ConfigStore, Profile } from './config/profiles.js';
import { EMBEDDED_PROFILE, endpointEnvVar, type Service } from './config/services.js';
import { AuthError, InterruptedError, UsageError } from './core/errors.js';
import type { HttpClient } from './core/http.js';
import { IOStreams } from './core/io.js';
import type { MockServer } from './mock/server.js';

/** The global flags every command accepts. */
export interface GlobalOptions {
  json?: boolean | string;
  /** false when --no-input was given. */
  input?: boolean;
  yes?: boolean;
  debug?: boolean;
  profile?: string;
}

export interface Prompter {
  /** Asks yes/no. With --yes: true. Without a terminal: fails naming `flag`. */
  confirm(message: string, opts?: { flag?: string; default?: boolean }): Promise<boolean>;
  /** Asks for text. Without a terminal: the default, or fails naming `flag`. */
  input(message: string, opts: { flag: string; default?: string }): Promise<string>;
  /** Asks for a secret; what is typed is not shown (a * per key). Without a terminal: fails with `hint`. */
  password(message: string, opts: { hint: string; field?: string }): Promise<string>;
  /** Asks to pick one of `choices` (arrow keys). Without a terminal: fails naming `flag`. */
  select?(message: string, opts: { flag: string; choices: Array<{ value: string; name: string }>; default?: string }): Promise<string>;
}

/** Where an @inquirer prompt reads and writes, and what cancels it. */
interface PromptContext {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  signal?: AbortSignal;
}

export interface ContextOverrides {
  env?: NodeJS.ProcessEnv;
  io?: IOStreams;
  /** undici dispatcher for every HTTP client (tests: a MockAgent). */
  dispatcher?: Dispatcher;
  prompter?: Prompter;
  /** Opens a URL in the system browser; returns false when it could not. */
  openBrowser?: (url: string) => Promise<boolean>;
  now?: () => number;
  cwd?: string;
}

export interface Endpoint {
  url: string;
  /** Served by the in-process embedded mock. */
  embedded: boolean;
  /** Where the URL came from, for `auth status` and error messages. */
  source: 'env' | 'profile' | 'embedded';
}

/**
 * Everything a verb needs, created lazily so that a command pays only for what it uses
 * (`--version` loads none of it).
 */
export class Context {
  readonly env: NodeJS.ProcessEnv;
  readonly io: IOStreams;
  readonly paths: OpsctlPaths;
  readonly now: () => number;
  readonly cwd: string;
  globals: GlobalOptions = {};
  /** Aborted on Ctrl-C / SIGTERM; long-running verbs watch it and stop at a safe point. */
  readonly abort = new AbortController();
  /** Set by a verb that watches `abort.signal`; otherwise Ctrl-C exits at once with 130. */
  handlesInterrupt = false;
  /** A non-error exit code a verb asks for (e.g. 3 for a partial result it rendered itself). */
  exitCode?: number;
  private readonly overrides: ContextOverrides;
  private configStore?: ConfigStore;
  private credentialStore?: CredentialStore;
  private embeddedServer?: Promise<MockServer>;
  private clients = new Map<Service, Promise<HttpClient>>();
  private cleanups: Array<() => Promise<void> | void> = [];

  constructor(overrides: ContextOverrides = {}) {
    this.overrides = overrides;
    this.env = overrides.env ?? process.env;
    this.io = overrides.io ?? new IOStreams({ env: this.env });
    this.paths = resolvePaths(this.env);
    this.now = overrides.now ?? Date.now;
    this.cwd = overrides.cwd ?? process.cwd();
  }

  get debugEnabled(): boolean {
    return Boolean(this.globals.debug) || this.env.OPSCTL_DEBUG === '1';
  }

  get jsonOutput(): boolean {
    return this.globals.json !== undefined && this.globals.json !== false;
  }

  get noInput(): boolean {
    return this.globals.input === false;
  }

  debug(line: string): void {
    if (this.debugEnabled) this.io.err(this.io.colorErr.dim(`debug ${line}`));
  }

  /** A writer of debug lines with --debug, else undefined: callers then build no lines at all. */
  get debugSink(): ((line: string) => void) | undefined {
    return this.debugEnabled ? (line) => this.debug(line) : undefined;
  }

  /** Register something to close when the command ends (servers, pools). */
  onCleanup(fn: () => Promise<void> | void): void {
    this.cleanups.push(fn);
  }

  async cleanup(): Promise<void> {
    const fns = this.cleanups.splice(0).reverse();
    for (const fn of fns) {
      try {
        await fn();
      } catch (err) {
        this.debug(`cleanup failed: ${(err as Error).message}`);
      }
    }
  }

  async config(): Promise<ConfigStore> {
    if (!this.configStore) {
      const { ConfigStore } = await import('./config/profiles.js');
      this.configStore = new ConfigStore(this.paths.config);
    }
    return this.configStore;
  }

  async credentials(): Promise<CredentialStore> {
    if (!this.credentialStore) {
      const { CredentialStore } = await import('./config/credentials.js');
      this.credentialStore = new CredentialStore(this.paths.config);
    }
    return this.credentialStore;
  }

  async profileName(): Promise<string> {
    return (await this.config()).activeProfile(this.globals.profile, this.env);
  }

  async profile(): Promise<Profile> {
    return (await this.config()).profile(await this.profileName());
  }

  /** A service's endpoint: OPSCTL_<SERVICE>_URL, then the profile, then (embedded profile only) the embedded mock. */
  async endpoint(service: Service): Promise<Endpoint> {
    const fromEnv = this.env[endpointEnvVar(service)];
    if (fromEnv) return { url: fromEnv.replace(/\/+$/, ''), embedded: false, source: 'env' };
    const name = await this.profileName();
    const configured = (await this.profile())[service];
    if (configured) return { url: configured.replace(/\/+$/, ''), embedded: false, source: 'profile' };
    // A profile that names an issuer signs in there (its endpoints come from the provider's metadata).
    if (service === 'auth') {
      const issuer = this.env.OPSCTL_ISSUER ?? (await this.profile()).issuer;
      if (issuer) return { url: issuer.replace(/\/+$/, ''), embedded: false, source: this.env.OPSCTL_ISSUER ? 'env' : 'profile' };
    }
    if (name === EMBEDDED_PROFILE) {
      const server = await this.embedded();
      return { url: server.url, embedded: true, source: 'embedded' };
    }
    throw new UsageError(`profile "${name}" has no ${service} endpoint`, {
      code: 'no_endpoint',
      hint: `run: opsctl config set ${service} https://… --profile ${name}   (or set ${endpointEnvVar(service)})`,
    });
  }

  /** The in-process mock of every service, with its state in opsctl's data directory. Started once. */
  embedded(): Promise<MockServer> {
    this.embeddedServer ??= (async () => {
      const statePath = this.env.OPSCTL_MOCK_STATE ?? join(this.paths.data, 'mock-state.json');
      const { createMockServer } = await import('./mock/server.js');
      const clientsFile = this.env.OPSCTL_MOCK_OAUTH_CLIENTS;
      const server = await createMockServer({
        state: statePath,
        port: 0,
        host: '127.0.0.1',
        // A per-command mock makes a trigger's first delivery attempt but runs no background retries
        // (those belong to `mock serve`, or to `opsctl mock events deliver`).
        options: { oauth: { ...(clientsFile ? { clientsFile } : {}), events: { background: false } } },
      });
      this.onCleanup(() => server.close());
      // A state file of the wrong shape is refused here, once, before any request meets it.
      await server.store.read(() => undefined);
      const marker = join(this.paths.data, '.embedded-notice');
      if (!existsSync(marker) || this.debugEnabled) {
        this.io.info(
          this.io.colorErr.dim(
            `Using the embedded mock services (state: ${statePath}). To use a real service: opsctl config set <service> URL --profile NAME, or set OPSCTL_<SERVICE>_URL.`,
          ),
        );
        const { ensurePrivateDir } = await import('./config/paths.js');
        await ensurePrivateDir(this.paths.data);
        await writeFile(marker, `${new Date(this.now()).toISOString()}\n`, { mode: 0o600 }).catch(() => undefined);
      }
      return server;
    })();
    return this.embeddedServer;
  }

  /** The HTTP client of a service, with its endpoint, credentials and pacing. One per service per command. */
  http(service: Service): Promise<HttpClient> {
    let p = this.clients.get(service);
    if (!p) {
      p = this.createClient(service);
      this.clients.set(service, p);
    }
    return p;
  }

  private async createClient(service: Service): Promise<HttpClient> {
    const endpoint = await this.endpoint(service);
    const [{ HttpClient, closeDefaultDispatcher }, { Pacer, parseRate }] = await Promise.all([
      import('./core/http.js'),
      import('./core/pacer.js'),
    ]);
    if (!this.overrides.dispatcher) this.onCleanup(() => closeDefaultDispatcher(this.abort.signal.aborted));
    let pacer;
    if (service === 'tracker') {
      const spec = this.env.OPSCTL_TRACKER_RATE_LIMIT ?? (await this.profile()).tracker_rate_limit ?? '200/1m';
      const rate = parseRate(spec);
      if (!rate) throw new UsageError(`tracker rate limit "${spec}" is not valid`, { hint: 'write it as requests/window, e.g. 200/1m' });
      let lastNotice = 0;
      const paceOpts = {
        ...rate,
        signal: this.abort.signal,
        onWait: (ms: number) => {
          this.debug(`[tracker] pacing: waiting ${ms} ms to stay under ${spec}`);
          // Long waits are worth a line on stderr (at most one every 10 s), so a paced run never looks hung.
          if (ms >= 2_000 && this.now() - lastNotice >= 10_000) {
            lastNotice = this.now();
            this.io.info(this.io.colorErr.dim(`rate limit: waiting ${Math.ceil(ms / 1000)} s to stay under ${spec} requests`));
          }
        },
      };
      // OPSCTL_TRACKER_PACING=process paces this process alone (no file, no lock). The embedded mock is
      // a server per process with its own counter, so there is nothing to share with other processes.
      const shared = this.env.OPSCTL_TRACKER_PACING !== 'process' && !endpoint.embedded;
      pacer = (shared ? await this.sharedPacer(endpoint, paceOpts) : undefined) ?? new Pacer(paceOpts);
    }
    return new HttpClient({
      service,
      baseUrl: endpoint.url,
      dispatcher: this.overrides.dispatcher,
      pacer,
      debug: this.debugSink,
      signal: this.abort.signal,
      timeoutMs: Number(this.env.OPSCTL_HTTP_TIMEOUT_MS) || undefined,
      notice: (line) => this.io.info(this.io.colorErr.dim(line)),
      credentials: () => this.serviceCredentials(service, endpoint),
    });
  }

  /**
   * The pacing every opsctl process of this user shares for one tracker origin and token: a small file
   * under the data directory, changed under a lock. When that file cannot be used (no permission, a
   * read-only home), this process paces alone and says so once.
   */
  private async sharedPacer(endpoint: Endpoint, opts: import('./core/pacer.js').PacerOptions): Promise<import('./core/pacer.js').RequestPacer | undefined> {
    const [{ SharedPacer }, { createHash }] = await Promise.all([import('./core/shared-pacer.js'), import('node:crypto')]);
    const token = await this.trackerToken(endpoint).catch(() => '');
    const key = createHash('sha256').update(`${new URL(endpoint.url).origin}\n${token}`).digest('hex').slice(0, 24);
    const file = join(this.paths.data, 'pacing', `tracker-${key}.json`);
    const pacer = new SharedPacer(file, opts);
    try {
      await pacer.init();
    } catch (err) {
      this.io.warn(`cannot share tracker pacing with other opsctl processes through ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); pacing this process alone. Fix the directory's permissions or set OPSCTL_CONFIG_DIR.`);
      return undefined;
    }
    this.onCleanup(() => pacer.flush());
    return pacer;
  }

  /** The credentials a request to `service` carries. Environment tokens beat stored ones (CI). */
  private async serviceCredentials(service: Service, endpoint: Endpoint): Promise<{ headers: Record<string, string> }> {
    if (service === 'tracker') return { headers: { [await this.trackerTokenHeader(endpoint)]: await this.trackerToken(endpoint) } };
    if (service === 'api' || service === 'labels') return { headers: { Authorization: `Bearer ${await this.accessToken()}` } };
    return { headers: {} };
  }

  /** `Shortcut-Token` for the real service, `Tracker-Token` elsewhere, unless the profile or environment names one. */
  async trackerTokenHeader(endpoint: Endpoint): Promise<string> {
    const { TRACKER_TOKEN_HEADERS, trackerTokenHeader } = await import('./tracker/token-header.js');
    const fromEnv = this.env.OPSCTL_TRACKER_TOKEN_HEADER;
    if (fromEnv && !TRACKER_TOKEN_HEADERS.some((h) => h.toLowerCase() === fromEnv.trim().toLowerCase())) {
      throw new UsageError(`OPSCTL_TRACKER_TOKEN_HEADER: "${fromEnv}" is not a tracker token header`, { hint: `use one of ${TRACKER_TOKEN_HEADERS.join(', ')}, or unset it to pick by host` });
    }
    return trackerTokenHeader(endpoint.url, fromEnv || (await this.profile()).tracker_token_header);
  }

  async trackerToken(endpoint?: Endpoint): Promise<string> {
    if (this.env.OPSCTL_TRACKER_TOKEN) return this.env.OPSCTL_TRACKER_TOKEN;
    let stored: string | undefined;
    let unreadable: unknown;
    try {
      stored = (await (await this.credentials()).get(await this.profileName())).tracker?.token;
    } catch (err) {
      if ((err as { code?: string }).code !== 'credentials_file') throw err;
      unreadable = err;
    }
    if (stored) return stored;
    const ep = endpoint ?? (await this.endpoint('tracker'));
    if (unreadable && !ep.embedded) throw unreadable;
    if (ep.embedded) {
      // The embedded tracker provisions its own token: a broken credential file does not stop it.
      if (unreadable) this.io.warn(`${(unreadable as Error).message}; using the embedded tracker's own token`);
      const server = await this.embedded();
      await server.service('tracker');
      return server.store.read((s) => s.tracker.token as string);
    }
    throw new AuthError('no tracker token', {
      hint: 'run: opsctl auth login --service tracker --with-token < token.txt   (or set OPSCTL_TRACKER_TOKEN)',
    });
  }

  /**
   * A valid OAuth access token for the api and labels services: OPSCTL_ACCESS_TOKEN, else the stored
   * token of `opsctl login`, refreshed first when less than 5 minutes remain (once for concurrent
   * callers); `invalid_grant` on refresh is an AuthError (exit 4) saying to run `opsctl login`.
   */
  async accessToken(): Promise<string> {
    if (this.env.OPSCTL_ACCESS_TOKEN) return this.env.OPSCTL_ACCESS_TOKEN;
    const { freshAccessToken } = await import('./auth/session.js');
    return (await freshAccessToken(this)).access_token;
  }

  async prompter(): Promise<Prompter> {
    if (this.overrides.prompter) return this.overrides.prompter;
    const canPrompt = this.io.canPrompt(this.noInput);
    const yes = Boolean(this.globals.yes);
    // A prompt reads keys in raw mode, so Ctrl-C reaches it as a key, not a signal: @inquirer then
    // rejects with ExitPromptError (a SIGTERM aborts it through the signal). Both are an interrupt: 130.
    const ask = async <C, T>(prompt: (config: C, context?: PromptContext) => Promise<T>, config: C): Promise<T> => {
      this.io.endProgress();
      try {
        return await prompt(config, { input: this.io.stdin, output: this.io.stderr, signal: this.abort.signal });
      } catch (err) {
        const name = (err as Error)?.name;
        if (name === 'ExitPromptError' || name === 'AbortPromptError') throw new InterruptedError('interrupted');
        throw err;
      }
    };
    return {
      confirm: async (message, opts = {}) => {
        if (yes) return true;
        if (!canPrompt) {
          if (opts.default !== undefined && !opts.flag) return opts.default;
          throw new UsageError(`${message.replace(/\?$/, '')}: confirmation needed`, {
            code: 'confirmation_required',
            hint: `pass ${opts.flag ?? '--yes'} to confirm without a prompt`,
          });
        }
        const { confirm } = await import('@inquirer/prompts');
        return ask(confirm, { message: this.io.safeErr(message), default: opts.default ?? false });
      },
      input: async (message, opts) => {
        if (!canPrompt) {
          if (opts.default !== undefined) return opts.default;
          throw new UsageError(`${message}: a value is needed`, { hint: `pass ${opts.flag}` });
        }
        const { input } = await import('@inquirer/prompts');
        return ask(input, { message: this.io.safeErr(message), default: opts.default });
      },
      password: async (message, opts) => {
        if (!canPrompt) throw new UsageError(`${message}: no terminal to ask on`, { field: opts.field, hint: opts.hint });
        const { password } = await import('@inquirer/prompts');
        return ask(password, { message: this.io.safeErr(message), mask: true });
      },
      select: async (message, opts) => {
        if (!canPrompt) throw new UsageError(`${message}: no terminal to ask on`, { field: opts.flag, hint: `pass ${opts.flag}` });
        const { select } = await import('@inquirer/prompts');
        return ask(select, { message: this.io.safeErr(message), choices: opts.choices.map((c) => ({ ...c, name: this.io.safeErr(c.name) })), default: opts.default });
      },
    };
  }

  /** Opens a URL in the system browser. Never throws: false means "could not", and the caller prints the URL. */
  async openBrowser(url: string): Promise<boolean> {
    if (this.overrides.openBrowser) return this.overrides.openBrowser(url);
    try {
      const { default: open } = await import('open');
      const child = await open(url, { wait: false });
      return await new Promise<boolean>((resolve) => {
        child.once('error', () => resolve(false));
        child.once('spawn', () => resolve(true));
        setTimeout(() => resolve(true), 500).unref();
      });
    } catch {
      return false;
    }
  }

  /** execa, loaded on first use. */
  async exec(): Promise<typeof import('execa').execa> {
    return (await import('execa')).execa;
  }
}

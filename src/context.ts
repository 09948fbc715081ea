import type { Dispatcher } from 'undici';
import type { CredentialStore } from './config/credentials.js';
import { resolvePaths, type OpsctlPaths } from './config/paths.js';
import type { ConfigStore, Profile } from './config/profiles.js';
import type { Service } from './config/services.js';
import type { HttpClient } from './core/http.js';
import { IOStreams } from './core/io.js';
import { resolveEndpoint, type Endpoint } from './context/endpoint.js';
import { createServiceClient } from './context/http.js';
import type { Prompter } from './context/prompter.js';

export type { Endpoint } from './context/endpoint.js';
export type { Prompter } from './context/prompter.js';

/** The global flags every command accepts. */
export interface GlobalOptions {
  json?: boolean | string;
  /** `--jq EXPR` (implies JSON). */
  jq?: string;
  /** false when --no-input was given. */
  input?: boolean;
  yes?: boolean;
  debug?: boolean;
  profile?: string;
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

/** opsctl's main(): runs a command line with its own streams and environment, returns the exit code. */
export type Main = (argv: string[], overrides?: ContextOverrides) => Promise<number>;

/**
 * What every verb needs, and nothing of any one service: IO streams, config and credentials, the
 * prompter, the browser, an HTTP client per service, the clock and the command's signals. Each is
 * built on first use by its own module (src/context/*), so a command pays only for what it uses
 * (`--version` builds none of it). Service policy lives in its room: the embedded mock in mock/,
 * the tracker's pacing and token header in tracker/, the OAuth session in auth/.
 */
export class Context {
  readonly env: NodeJS.ProcessEnv;
  readonly io: IOStreams;
  readonly paths: OpsctlPaths;
  readonly now: () => number;
  readonly cwd: string;
  /** main() itself, for a verb that runs other command lines (the demo); cli.ts passes it in. */
  readonly main?: Main;
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
  private clients = new Map<Service, Promise<HttpClient>>();
  private cleanups: Array<() => Promise<void> | void> = [];

  constructor(overrides: ContextOverrides = {}, main?: Main) {
    this.overrides = overrides;
    this.main = main;
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
      this.configStore = new ConfigStore(this.paths.config, this.abort.signal);
    }
    return this.configStore;
  }

  async credentials(): Promise<CredentialStore> {
    if (!this.credentialStore) {
      const { CredentialStore } = await import('./config/credentials.js');
      this.credentialStore = new CredentialStore(this.paths.config, this.abort.signal);
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
  endpoint(service: Service): Promise<Endpoint> {
    return resolveEndpoint(this, service);
  }

  /** The HTTP client of a service, with its endpoint, credentials and pacing. One per service per command. */
  http(service: Service): Promise<HttpClient> {
    let p = this.clients.get(service);
    if (!p) {
      p = createServiceClient(this, service, this.overrides.dispatcher);
      this.clients.set(service, p);
    }
    return p;
  }

  async prompter(): Promise<Prompter> {
    if (this.overrides.prompter) return this.overrides.prompter;
    return (await import('./context/prompter.js')).terminalPrompter(this);
  }

  /** Opens a URL in the system browser. Never throws: false means "could not", and the caller prints the URL. */
  async openBrowser(url: string): Promise<boolean> {
    if (this.overrides.openBrowser) return this.overrides.openBrowser(url);
    return (await import('./context/browser.js')).openInBrowser(url);
  }

  /** execa, loaded on first use. */
  async exec(): Promise<typeof import('execa').execa> {
    return (await import('execa')).execa;
  }

  // Kept as one-line delegations so callers written against the old Context (other branches in flight,
  // test/integration/login.test.ts) keep working; new code imports auth/access-token.ts or tracker/token.ts.

  /** The OAuth access token for the api and labels services (auth/access-token.ts). */
  async accessToken(): Promise<string> {
    return (await import('./auth/access-token.js')).accessToken(this);
  }
}

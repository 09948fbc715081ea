import type { Dispatcher } from 'undici';
import type { CredentialStore } from '../config/credentials.js';
import { resolvePaths, type OpsctlPaths } from '../config/paths.js';
import type { ConfigStore, Profile } from '../config/profiles.js';
import type { Endpoint, Service } from '../config/services.js';
import type { Context, GlobalOptions, Main, MainOverrides, Prompter } from '../context.js';
import type { OpsError } from '../core/errors.js';
import type { HttpClient } from '../core/http.js';
import { IOStreams } from '../core/io.js';
import { LazyAbort } from '../core/lazy-abort.js';
import { embeddedIfLoaded, loadEmbedded } from './embedded-loader.js';
import { resolveEndpoint } from './endpoint.js';
import { createServiceClient } from './http.js';

/** What a test (or the demo) may replace in a command's context. */
export interface ContextOverrides extends MainOverrides {
  /** undici dispatcher for every HTTP client (tests: a MockAgent). */
  dispatcher?: Dispatcher;
  prompter?: Prompter;
  /** Opens a URL in the system browser; returns false when it could not. */
  openBrowser?: (url: string) => Promise<boolean>;
  /** Where the debug lines go whatever --debug says (tests: a sink that watches them). */
  debugSink?: (line: string) => void;
}

/**
 * The one implementation of the port (src/context.ts): each part is built on first use by its own
 * module of this folder, so a command pays only for what it uses (`--version` builds none of it).
 * Service policy lives here, per service: endpoint resolution (endpoint.ts), a service's client
 * (http.ts: the tracker's pacing and token header in tracker.ts, the OAuth bearer token from auth/),
 * and the embedded mock (embedded.ts, the only importer of src/mock).
 */
export class WiredContext implements Context {
  readonly env: NodeJS.ProcessEnv;
  readonly io: IOStreams;
  readonly now: () => number;
  readonly cwd: string;
  readonly main?: Main;
  globals: GlobalOptions = {};
  readonly abort = new LazyAbort();
  handlesInterrupt = false;
  lastWords?: () => string | undefined;
  commandLine: readonly string[] = [];
  exitCode?: number;
  private readonly overrides: ContextOverrides;
  private configStore?: ConfigStore;
  private credentialStore?: CredentialStore;
  private clients = new Map<Service, Promise<HttpClient>>();
  private cleanups: Array<() => Promise<void> | void> = [];
  private resolvedPaths?: OpsctlPaths;

  constructor(overrides: ContextOverrides = {}, main?: Main) {
    this.overrides = overrides;
    this.main = main;
    this.env = overrides.env ?? process.env;
    this.io = overrides.io ?? new IOStreams({ env: this.env });
    this.now = overrides.now ?? Date.now;
    this.cwd = overrides.cwd ?? process.cwd();
  }

  /** Where config and data live, resolved on first use (a kv verb given --endpoints never asks). */
  get paths(): OpsctlPaths {
    return (this.resolvedPaths ??= resolvePaths(this.env));
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

  get debugSink(): ((line: string) => void) | undefined {
    if (this.overrides.debugSink) return this.overrides.debugSink;
    return this.debugEnabled ? (line) => this.debug(line) : undefined;
  }

  onCleanup(fn: () => Promise<void> | void): void {
    this.cleanups.push(fn);
  }

  /** Closes what the command opened, last first (cli.ts calls it when the command ends). */
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
      const { ConfigStore } = await import('../config/profiles.js');
      this.configStore = new ConfigStore(this.paths.config, this.abort.signal);
    }
    return this.configStore;
  }

  async credentials(): Promise<CredentialStore> {
    if (!this.credentialStore) {
      const { CredentialStore } = await import('../config/credentials.js');
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

  endpoint(service: Service): Promise<Endpoint> {
    return resolveEndpoint(this, service);
  }

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
    return (await import('./prompter.js')).terminalPrompter(this);
  }

  async openBrowser(url: string): Promise<boolean> {
    if (this.overrides.openBrowser) return this.overrides.openBrowser(url);
    return (await import('./browser.js')).openInBrowser(url);
  }

  async exec(): Promise<typeof import('execa').execa> {
    return (await import('execa')).execa;
  }

  async checkEndpoint(service: Service): Promise<void> {
    if ((await this.endpoint(service)).embedded) await (await loadEmbedded()).checkEmbeddedSignIn(this);
  }

  inProcessServerError(): OpsError | undefined {
    // not loaded: the embedded mock never ran in this process, so it had no error
    return embeddedIfLoaded()?.embeddedLocalError(this);
  }
}

/** A command's context: the port, wired. */
export function createContext(overrides: ContextOverrides = {}, main?: Main): WiredContext {
  return new WiredContext(overrides, main);
}

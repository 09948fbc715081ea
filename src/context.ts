import type { CredentialStore } from './config/credentials.js';
import type { OpsctlPaths } from './config/paths.js';
import type { ConfigStore, Profile } from './config/profiles.js';
import type { Endpoint, Service } from './config/services.js';
import type { OpsError } from './core/errors.js';
import type { HttpClient } from './core/http.js';
import type { IOStreams } from './core/io.js';
import type { Prompter } from './core/prompter.js';
import type { LazyAbort } from './core/lazy-abort.js';

export type { Endpoint } from './config/services.js';
export type { Prompter } from './core/prompter.js';

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
  /** --force-request: send an api or labels request even when the sign-in lacks the scope it needs. */
  forceRequest?: boolean;
}

/** What a verb that runs other command lines (the demo) may give main(): its own streams, environment, clock. */
export interface MainOverrides {
  env?: NodeJS.ProcessEnv;
  io?: IOStreams;
  now?: () => number;
  cwd?: string;
}

/** opsctl's main(): runs a command line with its own streams and environment, returns the exit code. */
export type Main = (argv: string[], overrides?: MainOverrides) => Promise<number>;

/**
 * The port: what every verb gets, and nothing of any one service's policy. IO streams, config and
 * credentials, the prompter, the browser, an HTTP client per service, the clock and the command's
 * signals. This file imports only types of core/ and config/; src/wiring/ builds the one
 * implementation (cli.ts creates it), and tests may build their own.
 */
export interface Context {
  readonly env: NodeJS.ProcessEnv;
  readonly io: IOStreams;
  readonly paths: OpsctlPaths;
  readonly now: () => number;
  readonly cwd: string;
  /** main() itself, for a verb that runs other command lines (the demo); cli.ts passes it in. */
  readonly main?: Main;
  globals: GlobalOptions;
  /** Aborted on Ctrl-C / SIGTERM; long-running verbs watch it and stop at a safe point (its signal is made when first read). */
  readonly abort: LazyAbort;
  /** Set by a verb that watches `abort.signal`; otherwise Ctrl-C exits at once with 130. */
  handlesInterrupt: boolean;
  /**
   * Set by a verb whose interruption can leave the person something to do (a member it stopped, down):
   * what to say on the way out, whenever the process ends early (a second Ctrl-C, a closed pipe).
   */
  lastWords?: () => string | undefined;
  /** The command line this command was run with (its words after `opsctl`): "run the same command". */
  commandLine: readonly string[];
  /** A non-error exit code a verb asks for (e.g. 3 for a partial result it rendered itself). */
  exitCode?: number;

  readonly debugEnabled: boolean;
  readonly jsonOutput: boolean;
  readonly noInput: boolean;
  /** A --debug line on stderr (nothing without --debug). */
  debug(line: string): void;
  /** A writer of debug lines with --debug, else undefined: callers then build no lines at all. */
  readonly debugSink: ((line: string) => void) | undefined;
  /** Register something to close when the command ends (servers, pools). */
  onCleanup(fn: () => Promise<void> | void): void;

  config(): Promise<ConfigStore>;
  credentials(): Promise<CredentialStore>;
  /** The name of the profile this command uses (--profile, the environment, the config). */
  profileName(): Promise<string>;
  profile(): Promise<Profile>;
  /** A service's endpoint: OPSCTL_<SERVICE>_URL, then the profile, then (embedded profile only) the embedded mock. */
  endpoint(service: Service): Promise<Endpoint>;
  /** The HTTP client of a service, with its endpoint, credentials and pacing. One per service per command. */
  http(service: Service): Promise<HttpClient>;
  prompter(): Promise<Prompter>;
  /** Opens a URL in the system browser. Never throws: false means "could not", and the caller prints the URL. */
  openBrowser(url: string): Promise<boolean>;
  /** execa, loaded on first use. */
  exec(): Promise<typeof import('execa').execa>;

  /**
   * Before a sign-in: what can keep a service's endpoint from answering that the wiring can check here
   * (for the embedded mock: its state directory can be written and its authorization server loads), so
   * the error naming the path and the fix comes now, before any page or browser step. Nothing to check
   * for a remote endpoint.
   */
  checkEndpoint(service: Service): Promise<void>;
  /** A server inside this process (the embedded mock): its last storage error (state file, directory or lock) behind a 503, if it ran and had one. */
  inProcessServerError(): OpsError | undefined;
}

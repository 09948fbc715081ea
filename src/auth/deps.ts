import type { CredentialStore } from '../config/credentials.js';
import type { ConfigStore, Profile } from '../config/profiles.js';
import type { Endpoint, Service } from '../config/services.js';
import type { OpsError } from '../core/errors.js';
import type { HttpClient } from '../core/http.js';
import type { IOStreams } from '../core/io.js';

// What auth/ takes from a command, piece by piece: each function names the pieces it uses (the port,
// src/context.ts, has them all, so a verb passes its context; a test passes just these). Auth reports
// what it did through `io.warn`, `debug` and its callbacks (a sign-in's `progress`, the device flow's
// `show`), never by writing to the command's streams.

export interface Clock {
  now: () => number;
}
/** The environment: OPSCTL_* settings and tokens. */
export interface Env {
  env: NodeJS.ProcessEnv;
}
/** A --debug line (nothing without --debug). */
export interface Debug {
  debug(line: string): void;
}
/** A warning the person sees, and --debug lines. */
export interface Notices extends Debug {
  io: Pick<IOStreams, 'warn'>;
}
export interface Credentials {
  credentials(): Promise<CredentialStore>;
}
export interface Config {
  config(): Promise<ConfigStore>;
}
/** The command's profile: its name and settings. */
export interface Profiles extends Config {
  profileName(): Promise<string>;
  profile(): Promise<Profile>;
}
export interface Endpoints {
  endpoint(service: Service): Promise<Endpoint>;
}
/** The HTTP client of a service (auth/ asks only for `auth`'s: the token, metadata and userinfo endpoints). */
export interface Http {
  http(service: Service): Promise<HttpClient>;
}
/** Where the provider metadata cache lives. */
export interface DataDir {
  paths: { data: string };
}
/** Ctrl-C: a sign-in that waits watches the signal, and says so. */
export interface Signals {
  abort: AbortController;
  handlesInterrupt: boolean;
}
/** What the wiring knows of an endpoint beyond its URL (see Context.checkEndpoint, Context.inProcessServerError). */
export interface EndpointChecks {
  checkEndpoint(service: Service): Promise<void>;
  inProcessServerError(): OpsError | undefined;
}

/** The provider's metadata (discovery) and ID-token keys. */
export type MetadataDeps = Http & Clock & Notices & DataDir;
/** The OAuth settings of the profile (auth/settings.ts). */
export type SettingsDeps = Env & Profiles & Endpoints & Credentials & MetadataDeps;
/** The stored accounts and client secrets (auth/accounts.ts). */
export type AccountDeps = Env & Credentials & Config & Clock & Notices;
/** A valid access token: settings, accounts, the token endpoint. */
export type SessionDeps = SettingsDeps & AccountDeps;
/** A sign-in that waits (device flow). */
export type SignInDeps = SessionDeps & Signals & Pick<EndpointChecks, 'checkEndpoint'>;
/** The browser sign-in: it also talks to the person (stderr, a pasted URL on stdin) and opens the browser. */
export type LoginDeps = SignInDeps &
  EndpointChecks & {
    io: Pick<IOStreams, 'warn' | 'stdin'>;
    openBrowser(url: string): Promise<boolean>;
  };

/** A client registered at the test's oidc-provider: what opsctl signs in as. */
export declare const OIDC_CLIENT_ID: string;
/** The provider's own API scopes (beyond OpenID's); anything else asked for is not granted. */
export declare const API_SCOPES: string[];

export interface OidcProviderHandle {
  issuer: string;
  close(): Promise<void>;
}

/** oidc-provider on 127.0.0.1 port 0 in this process (see the .mjs for the configuration). */
export declare function startOidcProvider(opts?: {
  scopes?: string[];
  revocation?: boolean;
  deviceFlow?: boolean;
  tokenExchange?: { jwks: { keys: unknown[] }; audience: string };
}): Promise<OidcProviderHandle>;

/** Plays a browser through oidc-provider's login and consent pages; returns the final redirect to the client. */
export declare function signInThroughPages(authorizeUrl: string, login: string): Promise<{ location: URL; pages: string[] }>;

/** Plays a person through oidc-provider's device flow pages (code, confirm, login, consent) up to its success page. */
export declare function approveDeviceThroughPages(verificationUri: string, userCode: string, login: string): Promise<{ pages: string[] }>;

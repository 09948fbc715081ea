// The OAuth facts the CLI and the mock authorization server agree on.

/** The desktop client the mock authorization server seeds, and opsctl uses against it when no client_id is configured. */
export const DEFAULT_CLIENT_ID = 'opsctl-desktop.apps.mock';
/** Installed apps cannot keep a secret; this one is public (as for any desktop app). */
export const DEFAULT_CLIENT_SECRET = 'mock-desktop-secret-not-confidential';
/** The scope identifier prefix ({scope_base} in the seed); short names like `media.readonly` expand to it. */
export const SCOPE_BASE = 'https://www.googleapis.com/auth';

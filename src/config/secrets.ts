/**
 * The OS keyring (Secret Service over D-Bus on Linux, Keychain on macOS, Credential Manager on Windows)
 * through @napi-rs/keyring, loaded only by the commands that read or write a secret. Where no keyring
 * can be reached, callers keep the secret in the 0600 credential file instead and say so.
 */

import { isSea } from '../core/sea.js';

/** The keyring service name every opsctl secret is filed under. */
export const KEYRING_SERVICE = 'opsctl';

/** How long one keyring call may take (a keyring that waits for an unlock prompt nobody answers). */
const KEYRING_TIMEOUT_MS = 10_000;

export interface Keyring {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

export type KeyringProbe = { keyring: Keyring } | { unavailable: string };

/** Why there is certainly no keyring here, without loading anything; undefined when one may be reachable. */
export function keyringAbsence(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform === 'linux' && !env.DBUS_SESSION_BUS_ADDRESS) return 'no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service';
  return undefined;
}

/** The keyring, or why it cannot be used. A keyring that fails its first call is treated as absent by the caller. */
export async function openKeyring(env: NodeJS.ProcessEnv): Promise<KeyringProbe> {
  const absent = keyringAbsence(env);
  if (absent) return { unavailable: absent };
  if (isSea()) {
    return {
      unavailable:
        'the single executable cannot load the keyring binding (a native addon); the npm package (npm install -g opsctl-<version>.tgz) uses the OS keyring',
    };
  }
  let mod: typeof import('@napi-rs/keyring');
  try {
    mod = await import('@napi-rs/keyring');
  } catch (err) {
    return { unavailable: `the keyring binding could not be loaded (${(err as Error).message.split('\n')[0]})` };
  }
  // On Linux: the Secret Service only (the kernel keyring, the library's other choice, forgets on reboot).
  const options = process.platform === 'linux' ? { linux: { store: 'secret-service' as const } } : undefined;
  const entry = (key: string) => new mod.AsyncEntry(KEYRING_SERVICE, key, options);
  return {
    keyring: {
      async get(key) {
        return (await entry(key).getPassword(AbortSignal.timeout(KEYRING_TIMEOUT_MS))) ?? undefined;
      },
      async set(key, value) {
        await entry(key).setPassword(value, AbortSignal.timeout(KEYRING_TIMEOUT_MS));
      },
      async delete(key) {
        await entry(key).deletePassword(AbortSignal.timeout(KEYRING_TIMEOUT_MS));
      },
    },
  };
}

/** A keyring error as one line (the binding nests D-Bus errors three deep). */
export function keyringProblem(err: unknown): string {
  let e = err as { message?: string; cause?: unknown };
  while (e?.cause && typeof e.cause === 'object') e = e.cause;
  return (e?.message ?? String(err)).split('\n')[0] ?? 'unknown error';
}

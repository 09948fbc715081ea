import type { ArgSpec, StringFlag } from '../../spec.js';

/** The flags and arguments the mock's verb specs share: plain data, nothing heavier. */
export const CLIENT_TYPES = ['desktop', 'universal_desktop', 'mobile_a', 'mobile_b', 'extension'] as const;
export const EVENT_KINDS_HELP = ['sessions-revoked', 'token-revoked', 'account-disabled', 'account-enabled'];

/** `<client_id>`, the option `clientId`. */
export const CLIENT_ARG = { name: '<client_id>', field: 'clientId' } as const satisfies ArgSpec;

const field = (value: string, help: string) => ({ type: 'string', value, help }) as const satisfies StringFlag;

/** The field flags shared by create and update (one per field of the seed's client table). */
export const FIELD_FLAGS = {
  name: field('name', 'the name shown in the project (1-128 characters)'),
  packageName: field('name', 'mobile_a: the application package name, e.g. com.example.app'),
  sha1Fingerprint: field('hex', 'mobile_a: SHA-1 fingerprint of the signing certificate (20 bytes hex, colons optional)'),
  bundleId: field('id', 'mobile_b: the bundle identifier (frozen once the integrity check is used)'),
  storeId: field('id', 'mobile_b: numeric store ID (optional); universal_desktop: exactly 12 characters'),
  teamId: field('id', 'mobile_b: the team ID (10 characters; needed by the integrity check)'),
  itemId: field('id', 'extension: the store item ID (32 letters a-p)'),
} as const;

import { PROFILE_KEYS } from '../../../config/profiles.js';
import { UsageError } from '../../../core/errors.js';

/** Names every JavaScript object inherits: never a config key or profile name (`profiles[name][key]` would reach Object.prototype). */
export const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The keys `opsctl config get/set/unset` take: `profile` (the default profile) and the profile keys, as own names only. */
const KNOWN: ReadonlySet<string> = new Set(['profile', ...Object.keys(PROFILE_KEYS)]);

/** A key the user typed, checked against the known set before anything is read or written (exit 2 naming it). */
export function checkConfigKey(key: string): void {
  if (KNOWN.has(key)) return;
  const hint = `known keys: ${[...KNOWN].join(', ')}`;
  if (PROTOTYPE_NAMES.has(key)) throw new UsageError(`"${key}" is not a config key (it is a reserved name)`, { code: 'unknown_key', field: 'key', hint });
  throw new UsageError(`unknown config key "${key}"`, { code: 'unknown_key', field: 'key', hint });
}

/** A profile name that would shadow an inherited property: refused before a profile of that name is written. */
export function checkProfileName(name: string): void {
  if (PROTOTYPE_NAMES.has(name))
    throw new UsageError(`--profile: "${name}" is a reserved name, not a profile name`, {
      code: 'validation',
      field: '--profile',
      hint: 'pick another name: letters, digits, - and _',
    });
}

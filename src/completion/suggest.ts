import type { Option } from 'commander';

/**
 * Values a flag's completion offers without commander enforcing them (`kv upgrade --to` takes any
 * version, but 3.3 … 3.6 are the ones worth offering). Read by the completion generator only.
 */
const SUGGESTED = new WeakMap<Option, readonly string[]>();

export function suggest<T extends Option>(option: T, values: readonly string[]): T {
  SUGGESTED.set(option, values);
  return option;
}

export function suggested(option: Option): readonly string[] | undefined {
  return SUGGESTED.get(option);
}

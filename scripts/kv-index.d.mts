// Types of scripts/kv-index.mjs, for the test that holds src/commands/kv/verb-index.ts equal to what it writes.
import type { CommandSpec, GroupSpec } from '../src/commands/spec.js';

export const KV_INDEX_FILE: string;
export function specFile(words: readonly string[]): string;
export function kvIndexSource(noun: GroupSpec, nounSummary: string): Promise<string>;
export function verbsOf(group: GroupSpec, words?: string[]): Array<[string[], CommandSpec]>;

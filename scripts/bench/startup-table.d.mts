// Types of scripts/bench/startup-table.mjs, for the test that imports it.
export interface Verb {
  name: string;
  args: string[];
  budget: number;
  /** The single executable's own budget, where it has one. */
  sea?: number;
}
export const VERBS: Verb[];
export function startupRatios(opts: { launchers: Record<string, string[]>; verbs?: Verb[]; rounds: number; env: Record<string, string> }): {
  baseMs: number;
  rounds: number;
  /** The 1-minute load average before and after the rounds (Linux; undefined elsewhere). */
  load: (number | undefined)[];
  rows: (Verb & { launchers: Record<string, { ratio: number; cpuMs: number }> })[];
};
export function embeddedLabels(bin: string, dir: string): void;
export function kvGetVerb(endpoints: string, key: string): Verb;
export function budgetOf(row: Verb, launcher: string): number;
export function printStartupTable(report: unknown, table: ReturnType<typeof startupRatios>, reference?: string[]): void;

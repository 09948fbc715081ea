import { TestRunner } from 'vitest';
import { scaled } from './deadline.js';

/** When the running test's own timeout ends, less 2 s; undefined outside a test (a hook, a script). */
function testEnds(): number | undefined {
  const t = TestRunner.getCurrentTest();
  const start = t?.result?.startTime;
  return start !== undefined && t?.timeout ? start + t.timeout - 2_000 : undefined;
}

// (the journal's reader lives in test/framework, beside the sandbox's bring-up; re-exported for the tests that read a journal)
export { readJournal } from '../framework/journal.js';

/**
 * Polls until `check` is truthy (a generous deadline, stretched by the machine's load; never a fixed sleep).
 * The pause between checks is 25 ms, or as long as the last check took when that was longer: a check that
 * starts processes (etcdctl, curl, the built binary) then spends at most half the wait's CPU on itself, where
 * back to back it kept a core busy for the whole wait; a cheap check (a file read) still runs every 25 ms.
 */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const wanted = Date.now() + scaled(timeoutMs);
  // (a wait that would outlive the test's own budget ends 2 s before it, naming what it waited for: vitest's own
  // timeout says only "Test timed out", which is all a CI run of 2026-11-29 said of a 400 s wait in kv-ssh-hosts)
  const budget = testEnds();
  const deadline = Math.min(wanted, budget ?? wanted);
  for (;;) {
    const started = Date.now();
    const v = await check();
    if (v) return v;
    const now = Date.now();
    if (now > deadline)
      throw new Error(`timed out waiting for ${what}${deadline < wanted ? ` (its ${scaled(timeoutMs)} ms cut short by the test's own timeout)` : ''}`);
    await new Promise((r) => setTimeout(r, Math.max(25, now - started)));
  }
}

/**
 * `until`, failing at once (with what the process said) when `proc` ends before the condition: a run
 * refused or halted early is named, never waited out to the deadline.
 */
export async function untilWhile<T>(
  proc: Promise<{ exitCode?: number; stderr?: string | Uint8Array | unknown[] }> & { exitCode?: number | null },
  check: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  let ended: { exitCode?: number; stderr?: string | Uint8Array | unknown[] } | undefined;
  void proc.then(
    (r) => (ended = r),
    (e: { exitCode?: number; stderr?: string | Uint8Array | unknown[] }) => (ended = e),
  );
  return until(
    async () => {
      const v = await check();
      if (v) return v;
      if (ended)
        throw new Error(
          `waiting for ${what}: the command ended first (exit ${String(ended.exitCode)}): ${(typeof ended.stderr === 'string' ? ended.stderr : Buffer.from(ended.stderr instanceof Uint8Array ? ended.stderr : []).toString()).slice(-3000)}`,
        );
      return v;
    },
    timeoutMs,
    what,
  );
}

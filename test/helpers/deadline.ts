import { availableParallelism, loadavg } from 'node:os';

/**
 * How much longer than on an idle machine a wait may take here: OPSCTL_TEST_DEADLINE_SCALE when set, else
 * the one-minute load average per core (at least 1, at most 6). A deadline is a ceiling for a condition
 * that is polled, never a sleep: scaling it costs nothing when the machine is fast.
 */
export function deadlineScale(env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.OPSCTL_TEST_DEADLINE_SCALE);
  if (Number.isFinite(set) && set >= 1) return set;
  const perCore = (loadavg()[0] ?? 0) / Math.max(1, availableParallelism());
  return Math.min(6, Math.max(1, perCore));
}

/** `ms` on an idle machine, stretched by the load when the wait starts. */
export function scaled(ms: number): number {
  return Math.round(ms * deadlineScale());
}

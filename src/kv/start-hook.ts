import { writeSync } from 'node:fs';

/** The points of a local member's start a test may stop at (src/kv/drivers/local.ts). */
export type StartPoint = 'before-intent' | 'after-intent' | 'after-spawn' | 'after-record';

/**
 * Tests only (honoured only when vitest's VITEST is set in the environment as well):
 * OPSCTL_TEST_KV_START_HOOK=mark prints "opsctl-test: <member> before-intent" on stderr when a
 * member's start begins (a test then SIGKILLs opsctl a measured delay later);
 * OPSCTL_TEST_KV_START_HOOK=pause:<point>[:<member>] prints "opsctl-test: <member> <point>" and
 * blocks there until the process is killed, so a kill lands exactly in that gap (<member> may be
 * #N: the Nth member start of this process to reach the point).
 */
const reached = new Map<StartPoint, number>();

export function startHook(env: NodeJS.ProcessEnv, point: StartPoint, member: string): void {
  const spec = env.OPSCTL_TEST_KV_START_HOOK;
  if (!spec || !env.VITEST) return;
  const [mode, at, who] = spec.split(':');
  if (mode === 'mark' && point === 'before-intent') writeSync(2, `opsctl-test: ${member} ${point}\n`);
  if (mode !== 'pause' || at !== point) return;
  const nth = who?.startsWith('#') ? Number(who.slice(1)) : undefined;
  reached.set(point, (reached.get(point) ?? 0) + 1);
  if (nth !== undefined ? reached.get(point) !== nth : who && who !== member) return;
  writeSync(2, `opsctl-test: ${member} ${point}\n`);
  // Blocks the whole process (nothing else may run past this point) until SIGKILL.
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

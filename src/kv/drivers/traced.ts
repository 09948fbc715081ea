/**
 * The crash-point seam: a driver whose every call is said before and after it on the debug sink
 * (`[kv] point: before stop kv2`, `[kv] point: after stop kv2 (changes)`), the calls that change a
 * member marked. Nothing acts on the lines here: a test's own sink may stop the process at one
 * (test/fixtures/opsctl-crash.cjs), so a kill lands exactly there; `--debug` shows them. With no sink,
 * the driver is used as it is.
 */
import type { MemberDriver } from './driver.js';

/** The calls that change a member or its data: a crash right after one leaves a state no earlier point does. */
const CHANGES: ReadonlySet<string> = new Set([
  'stop',
  'start',
  'kill',
  'backupDataDir',
  'restoreBackup',
  'dropBackup',
  'prepareRestore',
  'restoreData',
  'abandonRestore',
  'stage',
]);
/** Calls that only look (said too: every driver call is a point), but not the pure ones (current, runsHere, preview, checkMembers). */
const LOOKS: ReadonlySet<string> = new Set([
  'isRunning',
  'v2DataBytes',
  'hostV2Size',
  'copySize',
  'readConfig',
  'dataLayout',
  'startSettings',
  'hostShell',
  'binaryVersion',
  'checkRestore',
]);

export function traced<T extends MemberDriver>(driver: T, trace: ((line: string) => void) | undefined): T {
  if (!trace) return driver;
  return new Proxy(driver, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function' || !(CHANGES.has(prop) || LOOKS.has(prop))) return value;
      const fn = value as (...args: unknown[]) => unknown;
      const changes = CHANGES.has(prop) ? ' (changes)' : '';
      return (...args: unknown[]) => {
        const who = (args[0] as { name?: string } | undefined)?.name ?? '';
        trace(`[kv] point: before ${prop} ${who}`);
        const r = fn.apply(target, args);
        const after = () => trace(`[kv] point: after ${prop} ${who}${changes}`);
        if (r instanceof Promise) return (r as Promise<unknown>).then((x: unknown) => (after(), x));
        after();
        return r;
      };
    },
  });
}

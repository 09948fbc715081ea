import { scaled } from './deadline.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempConfigDir } from './cli.js';

/**
 * The upgrade journal under a config dir (the tests drive one cluster per dir), or undefined when there
 * is none yet or it is being replaced (read mid-rename).
 */
export function readJournal(configDir: string): any {
  const dir = join(configDir, 'data', 'kv', 'journals');
  const f = existsSync(dir) ? readdirSync(dir).find((x) => x.endsWith('.json')) : undefined;
  try {
    return f ? JSON.parse(readFileSync(join(dir, f), 'utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/** A temp OPSCTL_CONFIG_DIR with a kv sandbox helper; `down()` stops only the members it started. */
export function kvSandbox() {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-');
  const env = { OPSCTL_CONFIG_DIR: dir };
  const kv = (...argv: string[]) => runCli(['kv', ...argv], { env });
  const sandboxFile = join(dir, 'data', 'kv', 'sandbox', 'sandbox.json');
  const spec = () =>
    JSON.parse(readFileSync(sandboxFile, 'utf8')) as { members: Array<{ name: string; endpoint: string; dataDir: string; pidFile: string; logFile: string }> };
  return {
    dir,
    env,
    kv,
    spec,
    /** The journal of the sandbox cluster (there is one cluster per sandbox). */
    journal: () => readJournal(dir),
    fault(f: object) {
      for (const m of spec().members) writeFileSync(join(m.dataDir, 'CONDITIONS.json'), JSON.stringify(f));
    },
    logs(): string {
      return spec()
        .members.map((m) => readFileSync(m.logFile, 'utf8'))
        .join('');
    },
    async down() {
      if (existsSync(sandboxFile)) await kv('sandbox', 'down');
      cleanup();
    },
  };
}

/**
 * Polls until `check` is truthy (a generous deadline, stretched by the machine's load; never a fixed sleep).
 * The pause between checks is 25 ms, or as long as the last check took when that was longer: a check that
 * starts processes (etcdctl, curl, the built binary) then spends at most half the wait's CPU on itself, where
 * back to back it kept a core busy for the whole wait; a cheap check (a file read) still runs every 25 ms.
 */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + scaled(timeoutMs);
  for (;;) {
    const started = Date.now();
    const v = await check();
    if (v) return v;
    const now = Date.now();
    if (now > deadline) throw new Error(`timed out waiting for ${what}`);
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

/** A 3-member simulated sandbox of `version` (heartbeat 50 ms), up; `extra`: more `kv sandbox up` flags. */
export async function upSandbox(version: string, ...extra: string[]): Promise<ReturnType<typeof kvSandbox>> {
  const sb = kvSandbox();
  const up = await sb.kv('sandbox', 'up', '--members', '3', '--kv-version', version, '--heartbeat', '50ms', ...extra);
  if (up.code !== 0) throw new Error(`kv sandbox up --kv-version ${version}: exit ${up.code}: ${up.stderr}`);
  return sb;
}

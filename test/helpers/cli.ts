import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Dispatcher } from 'undici';
import { main } from '../../src/cli.js';
import type { Prompter } from '../../src/context.js';
import { IOStreams } from '../../src/core/io.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws if it is not). */
  json<T = any>(): T;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  stdin?: string;
  /** Pretend stdout/stderr/stdin are terminals. */
  tty?: boolean;
  dispatcher?: Dispatcher;
  prompter?: Prompter;
  openBrowser?: (url: string) => Promise<boolean>;
  now?: () => number;
  cwd?: string;
}

/** Runs the CLI in-process (wrangler-style): real commander tree, real HTTP, captured streams. */
export async function runCli(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (c: Buffer) => out.push(c.toString()));
  stderr.on('data', (c: Buffer) => err.push(c.toString()));
  stdin.end(opts.stdin ?? '');
  // the run's simulated member program (with the tests' conditions: test/helpers/sim-member.ts), as a user would set it
  const member = process.env.OPSCTL_KV_MEMBER ? { OPSCTL_KV_MEMBER: process.env.OPSCTL_KV_MEMBER } : {};
  const env = { NO_COLOR: '1', ...member, ...opts.env };
  const tty = opts.tty ?? false;
  const io = new IOStreams({ stdin, stdout, stderr, env, stdinTTY: tty, stdoutTTY: tty, stderrTTY: tty });
  const code = await main(argv, {
    env,
    io,
    dispatcher: opts.dispatcher,
    prompter: opts.prompter,
    openBrowser: opts.openBrowser ?? (async () => false),
    now: opts.now,
    cwd: opts.cwd,
  });
  const result = {
    code,
    stdout: out.join(''),
    stderr: err.join(''),
    json<T>() {
      return JSON.parse(result.stdout) as T;
    },
  };
  return result;
}

/** A fresh OPSCTL_CONFIG_DIR; call the returned cleanup in afterEach/afterAll. */
export function tempConfigDir(prefix = 'opsctl-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { BIN } from './bin.js';
import { scaled } from './deadline.js';

/**
 * A real pseudo-terminal for end-to-end tests, through util-linux's `script` (Debian's bsdutils,
 * an Essential package, so present on every Debian machine; no native addon to build). The command
 * runs with the pty slave as its stdin, stdout and stderr and as its controlling terminal, in the
 * pty's foreground process group: what a test writes goes through the terminal's line discipline
 * exactly as typed keys do, so `\x03` becomes SIGINT only while the terminal has ISIG on (the bug a
 * raw-mode spinner causes), and a prompt in raw mode reads it as a key.
 *
 * `script`'s own stdin is a pipe here, so it sets no window size: the terminal starts at 0×0, and
 * the harness sets the asked size with `stty` before exec'ing the command (cols 0 keeps it at 0).
 */
export const SCRIPT = '/usr/bin/script';

export interface PtyOptions {
  /** Terminal width; 0 = a terminal that reports 0 columns. Default 120. */
  cols?: number;
  rows?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])/g;

export class PtySession {
  private raw = '';
  private readonly child: ChildProcessWithoutNullStreams;
  private waiters: Array<() => void> = [];
  /** The exit code of the command (script -e passes it through; a signal death is 128+N). */
  readonly exited: Promise<number>;

  private constructor(argv: string[], opts: PtyOptions) {
    const cols = opts.cols ?? 120;
    const rows = opts.rows ?? 40;
    const command = `stty cols ${cols} rows ${rows} && exec ${argv.map(shellQuote).join(' ')}`;
    // A person at a terminal: not CI (which would turn prompts and spinners off), a real TERM.
    const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', SHELL: '/bin/sh', ...opts.env };
    if (opts.env?.CI === undefined) delete env.CI;
    for (const [k, v] of Object.entries(opts.env ?? {})) if (v === undefined) delete env[k];
    this.child = spawn(SCRIPT, ['--quiet', '--return', '--flush', '--command', command, '/dev/null'], { cwd: opts.cwd, env, stdio: 'pipe' });
    const onData = (c: Buffer) => {
      this.raw += c.toString('utf8');
      for (const w of this.waiters.splice(0)) w();
    };
    this.child.stdout.on('data', onData);
    this.child.stderr.on('data', onData);
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('close', (code, signal) => {
        for (const w of this.waiters.splice(0)) w();
        resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
      });
    });
  }

  /** Runs the built opsctl (bin/opsctl.cjs) on a new terminal. */
  static opsctl(args: string[], opts: PtyOptions = {}): PtySession {
    return new PtySession([process.execPath, BIN, ...args], opts);
  }

  static run(argv: string[], opts: PtyOptions = {}): PtySession {
    return new PtySession(argv, opts);
  }

  /** Everything the terminal showed, escape sequences included. */
  get output(): string {
    return this.raw;
  }

  /** What a person reads: escape sequences removed, CRLF as LF (a spinner's redraws stay as CR). */
  get text(): string {
    return this.raw.replace(ANSI, '').replace(/\r\n/g, '\n');
  }

  /** Types `keys` on the terminal (e.g. '\x03' for Ctrl-C, 'y\r'). */
  type(keys: string): void {
    this.child.stdin.write(keys);
  }

  /** The Ctrl-C keystroke, as a person presses it (not kill -INT). */
  ctrlC(): void {
    this.type('\x03');
  }

  /** Waits until the terminal has shown `what` (after escape sequences are removed); generous by default. */
  async waitFor(what: string | RegExp, timeoutMs = 90_000): Promise<void> {
    const seen = () => (typeof what === 'string' ? this.text.includes(what) : what.test(this.text));
    const deadline = Date.now() + scaled(timeoutMs);
    let done = false;
    void this.exited.then(() => (done = true));
    while (!seen()) {
      if (done) throw new Error(`the command ended before showing ${String(what)}; the terminal showed:\n${this.text}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${String(what)}; the terminal showed:\n${this.text}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Waits for the exit code, failing (and killing the command) after `timeoutMs`. */
  async exitCode(timeoutMs = 90_000): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill();
        reject(new Error(`the command did not exit within ${timeoutMs} ms; the terminal showed:\n${this.text.slice(-4000)}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends `script` (and so the terminal: the command gets SIGHUP) if it still runs. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Whether the pty harness can run here (`script` from util-linux). */
export function ptyAvailable(): boolean {
  return existsSync(SCRIPT);
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

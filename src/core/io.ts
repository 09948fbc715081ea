import type { Readable, Writable } from 'node:stream';
import { Chalk, type ChalkInstance } from 'chalk';

/** The three standard streams and what they are connected to (TTY or pipe), as gh's IOStreams. */
export interface IOStreamsInit {
  stdin?: Readable & { isTTY?: boolean };
  stdout?: Writable & { isTTY?: boolean; columns?: number };
  stderr?: Writable & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
  /** Force TTY detection (tests). */
  stdinTTY?: boolean;
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
}

export interface Progress {
  /** Change the text of the running step. */
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  /** Stop without a final mark. */
  stop(): void;
}

export class IOStreams {
  readonly stdin: Readable & { isTTY?: boolean };
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly isStdinTTY: boolean;
  readonly isStdoutTTY: boolean;
  readonly isStderrTTY: boolean;
  /** Colours for stdout and stderr respectively (NO_COLOR, FORCE_COLOR and TTY-ness decide). */
  readonly color: ChalkInstance;
  readonly colorErr: ChalkInstance;
  private readonly env: NodeJS.ProcessEnv;

  constructor(init: IOStreamsInit = {}) {
    this.env = init.env ?? process.env;
    this.stdin = init.stdin ?? process.stdin;
    this.stdout = init.stdout ?? process.stdout;
    this.stderr = init.stderr ?? process.stderr;
    this.isStdinTTY = init.stdinTTY ?? Boolean(this.stdin.isTTY);
    this.isStdoutTTY = init.stdoutTTY ?? Boolean(this.stdout.isTTY);
    this.isStderrTTY = init.stderrTTY ?? Boolean(this.stderr.isTTY);
    this.color = new Chalk({ level: colorLevel(this.isStdoutTTY, this.env) });
    this.colorErr = new Chalk({ level: colorLevel(this.isStderrTTY, this.env) });
  }

  /** Data goes to stdout. */
  out(text: string): void {
    this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Messages, warnings and progress go to stderr. */
  err(text: string): void {
    this.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  warn(text: string): void {
    this.err(`${this.colorErr.yellow('!')} ${text}`);
  }

  info(text: string): void {
    this.err(text);
  }

  success(text: string): void {
    this.err(`${this.colorErr.green('✓')} ${text}`);
  }

  /** Whether a prompt may be shown: both ends are terminals, CI is unset, and --no-input was not given. */
  canPrompt(noInput: boolean): boolean {
    return this.isStdinTTY && this.isStdoutTTY && !this.env.CI && !noInput;
  }

  /**
   * A progress indicator on stderr: an ora spinner on a TTY, else one plain line per step (no spinner,
   * no colour), so CI logs stay readable.
   */
  async progress(text: string): Promise<Progress> {
    if (this.isStderrTTY && !this.env.CI) {
      const { default: ora } = await import('ora');
      const spinner = ora({ text, stream: this.stderr as NodeJS.WritableStream, isEnabled: true }).start();
      return {
        update: (t) => {
          spinner.text = t;
        },
        succeed: (t) => void spinner.succeed(t),
        fail: (t) => void spinner.fail(t),
        stop: () => void spinner.stop(),
      };
    }
    this.err(`… ${text}`);
    let last = text;
    return {
      update: (t) => {
        if (t !== last) this.err(`… ${t}`);
        last = t;
      },
      succeed: (t) => this.err(`✓ ${t ?? last}`),
      fail: (t) => this.err(`✗ ${t ?? last}`),
      stop: () => undefined,
    };
  }

  /** Read all of stdin (for `--with-token`, `--data -`). */
  async readStdin(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks).toString('utf8');
  }
}

function colorLevel(isTTY: boolean, env: NodeJS.ProcessEnv): 0 | 1 | 2 | 3 {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    const n = Number(force);
    return n >= 1 && n <= 3 ? (n as 1 | 2 | 3) : 1;
  }
  if (!isTTY || env.TERM === 'dumb') return 0;
  return 1;
}

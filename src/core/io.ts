import { EventEmitter } from 'node:events';
import { fstatSync, statSync, writeSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { Chalk, type ChalkInstance } from 'chalk';

type StdStream = Writable & { isTTY?: boolean; columns?: number };

/** The three standard streams and what they are connected to (TTY or pipe), as gh's IOStreams. */
export interface IOStreamsInit {
  stdin?: Readable & { isTTY?: boolean };
  stdout?: Writable & { isTTY?: boolean; columns?: number };
  stderr?: Writable & { isTTY?: boolean; columns?: number };
  env?: NodeJS.ProcessEnv;
  /** Force TTY detection (tests). */
  stdinTTY?: boolean;
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
  /** Force the terminal width (tests); 0 = unknown. */
  columns?: number;
}

export interface Progress {
  /** Change the text of the running step. */
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  /** Stop without a final mark. */
  stop(): void;
}

/**
 * The standard streams, colours and TTY answers are each made on first use: Node creates
 * process.stdin/stdout/stderr lazily, and creating one costs a few ms of CPU (`--help` writes only
 * stdout and never touches stdin or stderr).
 */
export class IOStreams {
  private readonly env: NodeJS.ProcessEnv;
  private readonly init: IOStreamsInit;
  private readonly forcedColumns?: number;
  private active?: ProgressImpl;
  /** Told a write error of the stdout or stderr this made (not of streams given to it): the entry point's EPIPE rules. */
  onStreamError?: (name: 'stdout' | 'stderr', err: NodeJS.ErrnoException) => void;
  private made: {
    stdin?: Readable & { isTTY?: boolean };
    stdout?: Writable & { isTTY?: boolean; columns?: number };
    stderr?: Writable & { isTTY?: boolean; columns?: number };
    isStdinTTY?: boolean;
    isStdoutTTY?: boolean;
    isStderrTTY?: boolean;
    color?: ChalkInstance;
    colorErr?: ChalkInstance;
  } = {};

  constructor(init: IOStreamsInit = {}) {
    this.env = init.env ?? process.env;
    this.init = init;
    this.forcedColumns = init.columns;
  }

  get stdin(): Readable & { isTTY?: boolean } {
    return (this.made.stdin ??= this.init.stdin ?? process.stdin);
  }

  get stdout(): StdStream {
    return (this.made.stdout ??= this.init.stdout ?? this.std('stdout'));
  }

  get stderr(): StdStream {
    return (this.made.stderr ??= this.init.stderr ?? this.std('stderr'));
  }

  /** The process's stdout or stderr: a plain writer of its descriptor when a write to it never waits on a reader (see FdWriter). */
  private std(name: 'stdout' | 'stderr'): StdStream {
    const fd = name === 'stdout' ? 1 : 2;
    const stream = neverWaits(fd) ? (new FdWriter(fd) as unknown as StdStream) : process[name];
    stream.on('error', (err: NodeJS.ErrnoException) => this.onStreamError?.(name, err));
    return stream;
  }

  get isStdinTTY(): boolean {
    return (this.made.isStdinTTY ??= this.init.stdinTTY ?? Boolean(this.stdin.isTTY));
  }

  get isStdoutTTY(): boolean {
    return (this.made.isStdoutTTY ??= this.init.stdoutTTY ?? Boolean(this.stdout.isTTY));
  }

  get isStderrTTY(): boolean {
    return (this.made.isStderrTTY ??= this.init.stderrTTY ?? Boolean(this.stderr.isTTY));
  }

  /** Colours for stdout (NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE, CLICOLOR and TTY-ness decide, in that order). */
  get color(): ChalkInstance {
    return (this.made.color ??= new Chalk({ level: colorLevel({ isTTY: this.isStdoutTTY, env: this.env }) }));
  }

  /** Colours for stderr. */
  get colorErr(): ChalkInstance {
    return (this.made.colorErr ??= new Chalk({ level: colorLevel({ isTTY: this.isStderrTTY, env: this.env }) }));
  }

  /** Data goes to stdout. */
  out(text: string): void {
    const redraw = this.isStdoutTTY ? this.active?.hide() : undefined;
    this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    redraw?.();
  }

  /** Messages, warnings and progress go to stderr. */
  err(text: string): void {
    const redraw = this.active?.hide();
    this.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
    redraw?.();
  }

  /** A warning; its text may come from a server, so control characters are shown, not obeyed, on a TTY. */
  warn(text: string): void {
    this.err(`${this.colorErr.yellow('!')} ${this.safeErr(text)}`);
  }

  info(text: string): void {
    this.err(text);
  }

  success(text: string): void {
    this.err(`${this.colorErr.green('✓')} ${this.safeErr(text)}`);
  }

  /**
   * Text for stdout with control characters neutralised when stdout is a terminal (see
   * `neutralizeControls`); `keepColours` for text that carries our own colouring.
   */
  safeOut(text: string, { keepColours = false }: { keepColours?: boolean } = {}): string {
    return this.isStdoutTTY ? neutralizeControls(text, { keepColours: keepColours && this.color.level > 0 }) : text;
  }

  /** Text for stderr with control characters neutralised when stderr is a terminal. */
  safeErr(text: string): string {
    return this.isStderrTTY ? neutralizeControls(text) : text;
  }

  /** Whether a prompt may be shown: both ends are terminals, CI is unset, and --no-input was not given. */
  canPrompt({ noInput }: { noInput: boolean }): boolean {
    return this.isStdinTTY && this.isStdoutTTY && !this.env.CI && !noInput;
  }

  /**
   * The terminal width of stdout (tables) or stderr (progress): 0 when unknown, when not a terminal,
   * or when the terminal reports 0 columns (e.g. `script` with stdin not a terminal).
   */
  columns(stream: 'stdout' | 'stderr'): number {
    if (this.forcedColumns !== undefined) return this.forcedColumns;
    const tty = stream === 'stdout' ? this.isStdoutTTY : this.isStderrTTY;
    const n = tty ? Number((stream === 'stdout' ? this.stdout : this.stderr).columns) : 0;
    return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
  }

  /**
   * Whether progress animates in place (a spinner redrawn on one line): stderr is a terminal of known,
   * non-zero width, CI is unset and TERM is not dumb. Otherwise progress is one plain line per step.
   */
  get liveProgress(): boolean {
    return this.isStderrTTY && !this.env.CI && this.env.TERM !== 'dumb' && this.columns('stderr') >= MIN_LIVE_COLUMNS;
  }

  /**
   * The one progress facility of every command, on stderr. On a live terminal: a spinner on a single
   * line, redrawn with carriage return + erase-line only (never cursor-up, never wider than the
   * terminal, so nothing wraps), and it never touches stdin (no raw mode: Ctrl-C stays a signal).
   * Otherwise one plain line per step, no colour. Once finished (succeed/fail/stop), or after
   * `endProgress()` (an interrupt, the final error), later calls print nothing.
   */
  progress(text: string): Progress {
    this.endProgress();
    const p: ProgressImpl = this.liveProgress ? new LiveProgress(this, text) : new LineProgress(this, text);
    this.active = p;
    return p;
  }

  /** Ends the running progress (if any) without a mark; nothing it is asked later is printed. */
  endProgress(): void {
    const p = this.active;
    this.active = undefined;
    p?.stop();
  }

  /** @internal the progress that finished is no longer the active one. */
  released(p: ProgressImpl): void {
    if (this.active === p) this.active = undefined;
  }

  /** @internal raw write to stderr, bypassing the spinner's line handling. */
  rawErr(text: string): void {
    this.stderr.write(text);
  }

  /** Read all of stdin (for `--with-token`, `--data -`). */
  async readStdin(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks).toString('utf8');
  }
}

/**
 * Whether a write to descriptor `fd` never waits on a reader: a regular file or /dev/null (POSIX). A pipe or a
 * socket is Node's own stream, which writes to it asynchronously (POSIX): a reader that stops reading (a pager not
 * scrolled, a stalled log collector) must not stop the event loop of a command that is changing a cluster — a
 * member left down between its stop and its start, a Ctrl-C not heard — while a synchronous write waits on it.
 */
function neverWaits(fd: number): boolean {
  if (process.platform === 'win32') return false;
  try {
    const st = fstatSync(fd);
    if (st.isFile()) return true;
    return st.isCharacterDevice() && st.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

/**
 * stdout or stderr that is a file or /dev/null, written with writeSync: Node's own stream of a file writes
 * synchronously too, but making process.stdout (or asking node:tty) loads node:net and every stream module, about a
 * tenth of `node -e 0`'s CPU for each command that prints. Only `write` and the 'error' event (on the next tick, as a stream's, and only
 * when someone listens) are what the rest of opsctl asks of it. A descriptor left non-blocking by whoever shares it
 * is waited on (EAGAIN), a short write continued.
 */
class FdWriter extends EventEmitter {
  readonly isTTY = false;
  readonly columns = undefined;

  constructor(private readonly fd: number) {
    super();
  }

  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean {
    const done = rest.find((a): a is (err?: Error | null) => void => typeof a === 'function');
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    try {
      for (let at = 0; at < bytes.length;) {
        try {
          at += writeSync(this.fd, bytes, at);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
        }
      }
    } catch (err) {
      process.nextTick(() => {
        done?.(err as Error);
        if (this.listenerCount('error') > 0) this.emit('error', err);
      });
      return false;
    }
    if (done) process.nextTick(done);
    return true;
  }
}

function colorLevel({ isTTY, env }: { isTTY: boolean; env: NodeJS.ProcessEnv }): 0 | 1 | 2 | 3 {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    const n = Number(force);
    return n >= 1 && n <= 3 ? (n as 1 | 2 | 3) : 1;
  }
  // gh's habits: CLICOLOR_FORCE (not "0") colours a pipe too; CLICOLOR=0 turns colour off on a terminal
  if (env.CLICOLOR_FORCE !== undefined && env.CLICOLOR_FORCE !== '' && env.CLICOLOR_FORCE !== '0') return 1;
  if (env.CLICOLOR === '0') return 0;
  if (!isTTY || env.TERM === 'dumb') return 0;
  return 1;
}

/** Below this width a spinner line is not worth drawing: plain lines instead. */
const MIN_LIVE_COLUMNS = 10;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;
/** Back to column 0 and erase the whole line: the only cursor movement progress ever makes. */
const CLEAR_LINE = '\r\u001b[2K';

interface ProgressImpl extends Progress {
  /** Takes the progress off the screen for a write; returns how to put it back. */
  hide(): (() => void) | undefined;
}

/** One line per step: for pipes, CI logs, dumb terminals and terminals of unknown or zero width. */
class LineProgress implements ProgressImpl {
  private last: string;
  private done = false;

  constructor(
    private readonly io: IOStreams,
    text: string,
  ) {
    this.last = text;
    io.err(`… ${text}`);
  }

  update(text: string): void {
    if (this.done || text === this.last) return;
    this.last = text;
    this.io.err(`… ${text}`);
  }

  succeed(text?: string): void {
    this.finish(`✓ ${text ?? this.last}`);
  }

  fail(text?: string): void {
    this.finish(`✗ ${text ?? this.last}`);
  }

  stop(): void {
    this.finish(undefined);
  }

  hide(): undefined {
    return undefined;
  }

  private finish(line: string | undefined): void {
    if (this.done) return;
    this.done = true;
    this.io.released(this);
    if (line !== undefined) this.io.err(line);
  }
}

/** A spinner on one line of a terminal of known width; the text is cut to fit so it never wraps. */
class LiveProgress implements ProgressImpl {
  private text: string;
  private frame = 0;
  private drawn = false;
  private done = false;
  /** Set when the terminal lost its width mid-run: plain lines from then on. */
  private plain?: LineProgress;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly io: IOStreams,
    text: string,
  ) {
    this.text = text;
    this.draw();
    this.timer = setInterval(() => {
      this.frame = (this.frame + 1) % FRAMES.length;
      this.draw();
    }, FRAME_MS);
    // a spinner never keeps the process alive
    this.timer.unref();
  }

  update(text: string): void {
    if (this.plain) return this.plain.update(text);
    if (this.done) return;
    this.text = text;
    this.draw();
  }

  succeed(text?: string): void {
    if (this.plain) return this.finish(undefined, () => this.plain!.succeed(text));
    this.finish(`${this.io.colorErr.green('✓')} ${this.io.safeErr(text ?? this.text)}`);
  }

  fail(text?: string): void {
    if (this.plain) return this.finish(undefined, () => this.plain!.fail(text));
    this.finish(`${this.io.colorErr.red('✗')} ${this.io.safeErr(text ?? this.text)}`);
  }

  stop(): void {
    this.finish(undefined, () => this.plain?.stop());
  }

  hide(): (() => void) | undefined {
    if (!this.drawn) return undefined;
    this.clear();
    return () => this.draw();
  }

  private draw(): void {
    if (this.done || this.plain) return;
    const cols = this.io.columns('stderr');
    if (cols < MIN_LIVE_COLUMNS) {
      // the terminal shrank to nothing (or stopped saying its width): plain lines from here on
      clearInterval(this.timer);
      this.clear();
      this.plain = new LineProgress(this.io, this.text);
      return;
    }
    const line = `${this.io.colorErr.cyan(FRAMES[this.frame])} ${fit(this.io.safeErr(this.text), cols - 3)}`;
    this.io.rawErr(`${CLEAR_LINE}${line}`);
    this.drawn = true;
  }

  private clear(): void {
    if (!this.drawn) return;
    this.io.rawErr(CLEAR_LINE);
    this.drawn = false;
  }

  private finish(line: string | undefined, then?: () => void): void {
    if (this.done) return;
    this.done = true;
    clearInterval(this.timer);
    this.clear();
    this.io.released(this);
    if (line !== undefined) this.io.rawErr(`${line}\n`);
    then?.();
  }
}

/** Cuts `s` to one line of at most `width` terminal columns, with an ellipsis when cut. */
function fit(s: string, width: number): string {
  return cutToWidth(s.replace(/[\r\n\t]+/g, ' '), width);
}

/**
 * Columns a character takes on a terminal (the wcwidth rules): 0 for combining marks, zero-width
 * characters and variation selectors, 2 for East Asian wide/fullwidth characters and emoji, else 1.
 * Hand-written (a dozen ranges) rather than a width library because io.ts loads with every command
 * and start-up is budgeted.
 */
export function charWidth(ch: string): number {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0x2060 || cp === 0xfeff || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (/^\p{M}$/u.test(ch)) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f680 && cp <= 0x1f6ff) ||
    (cp >= 0x1fa70 && cp <= 0x1faff) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Terminal columns of a string without escape sequences. */
export function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch);
  return w;
}

/** `s` cut to at most `width` terminal columns, the last one an ellipsis when cut. */
export function cutToWidth(s: string, width: number): string {
  if (textWidth(s) <= width) return s;
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = charWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return width > 0 ? `${out}…` : '';
}

/** An SGR (colour/bold) sequence as chalk writes it. */
// eslint-disable-next-line no-control-regex -- ESC is the character this pattern is about
const SGR = /^\u001b\[[0-9;]*m/;

/**
 * Server-supplied text made safe for a terminal: every control character except newline and tab
 * (C0, DEL and C1: ESC, BEL, CR, backspace, CSI…) is shown in visible form instead of being obeyed,
 * so a message cannot move the cursor, clear the screen, retitle or ring the terminal. C0 and DEL in
 * caret notation (ESC → ^[, BEL → ^G, DEL → ^?), C1 as <U+009B>. CRLF line ends become newlines.
 * Bidirectional controls (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069: the "Trojan Source"
 * characters that make a terminal show text in another order than it is) are shown as <U+202E> too.
 * `keepColours` lets colour/bold sequences (ESC [ digits m) through, for text that mixes our own
 * colouring with server words: they can change colours only, never move anything.
 */
export function neutralizeControls(text: string, { keepColours = false }: { keepColours?: boolean } = {}): string {
  return (
    text
      .replace(/\r\n/g, '\n')
      // eslint-disable-next-line no-control-regex -- matching control characters is what this function is for
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c, offset: number, whole: string) => {
        const code = c.charCodeAt(0);
        if (keepColours && code === 0x1b && SGR.test(whole.slice(offset, offset + 16))) return c;
        if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
        if (code === 0x7f) return '^?';
        return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
      })
  );
}

import { CommanderError } from 'commander';
import type { Context } from './context.js';
import { ExitCode } from './core/exit-codes.js';
import { isOpsError, type OpsError } from './core/errors.js';
import { withProfileFlag } from './core/hints.js';
import { onFirstWasm } from './core/wasm.js';
import { buildProgram, JSON_FIELD_LIST, splitJsonFlag } from './program.js';
import { builtForLine, completeVerb } from './commands/spec.js';
import { flagsAfterVerb } from './verb-flags.js';
import type { ContextOverrides, WiredContext } from './wiring/context.js';

/**
 * Runs opsctl with `argv` (without node and script) and returns the exit code. Never calls
 * process.exit, so tests run it in-process with their own streams and environment.
 */
export async function main(argv: string[], overrides: ContextOverrides = {}, ctxOut?: (ctx: WiredContext) => void): Promise<number> {
  // the port (context.ts) is wired here, the one place that builds it
  const { createContext } = await import('./wiring/context.js');
  const ctx = createContext(overrides, main);
  ctx.commandLine = argv;
  ctxOut?.(ctx);
  const split = splitJsonFlag(argv);
  // A parse error happens before any action sets ctx.globals: with --json anywhere in argv it is
  // rendered as {"error":…} instead of commander's text.
  if (split.json) ctx.globals = { json: true };
  const line = split.argv;
  let program = await prepareProgram(ctx, split, {});
  try {
    try {
      await program.parseAsync(split.argv, { from: 'user' });
    } catch (err) {
      // a verb built with only the options its line can use (spec.ts addVerb): the error is found again with every
      // option, so its words (a suggestion among them) are the verb's in full. Nothing ran: commander parses first.
      if (!(err instanceof CommanderError) || !builtForLine(program)) throw err;
      split.argv = line;
      program = await prepareProgram(ctx, split, { everyFlag: true });
      await program.parseAsync(split.argv, { from: 'user' });
    }
    return ctx.exitCode ?? ExitCode.ok;
  } catch (err) {
    // a spinner or counter still running stops here: nothing of it may follow the error or summary
    ctx.io.endProgress();
    if (err instanceof CommanderError) {
      // `--json name` (a field list as its own word) is taken as `--json=name` when the command has no room for it
      const attached = err.code === 'commander.excessArguments' ? jsonFieldsAttached(argv) : undefined;
      if (attached) return await main(attached, overrides, ctxOut);
      return reportParseError(ctx, err, argv, commandPath(program, split.argv), program);
    }
    return reportError(ctx, err);
  } finally {
    ctx.io.endProgress();
    await ctx.cleanup();
  }
}

/** The program for `split`'s line, its parse errors left to main(); `split.argv` as commander is to parse it. */
async function prepareProgram(ctx: WiredContext, split: { argv: string[] }, { everyFlag }: { everyFlag?: boolean }): Promise<import('commander').Command> {
  const program = await buildProgram(ctx, split.argv, { everyFlag });
  // etcdctl's order: a verb's flags before the verb (`kv --endpoints X get foo`) are read as the verb's
  split.argv = flagsAfterVerb(program, split.argv, completeVerb);
  const output = {
    writeOut: (s: string) => ctx.io.stdout.write(s),
    writeErr: (s: string) => ctx.io.stderr.write(s),
    // a parse error is printed by reportParseError in the shape of every other error ("X message" + hint)
    outputError: () => {},
  };
  for (const cmd of [program, ...allCommands(program)]) {
    cmd.exitOverride();
    cmd.configureOutput(output);
  }
  return program;
}

/** `argv` with a bare `--json` and the field list after it joined (`--json id` → `--json=id`), if that word looks like one. */
function jsonFieldsAttached(argv: readonly string[]): string[] | undefined {
  const end = argv.indexOf('--');
  const at = argv.indexOf('--json');
  const next = at >= 0 && (end < 0 || at < end) ? argv[at + 1] : undefined;
  if (next === undefined || !JSON_FIELD_LIST.test(next)) return undefined;
  return [...argv.slice(0, at), `--json=${next}`, ...argv.slice(at + 2)];
}

/**
 * The command words of `argv` that name commands (`opsctl tracker labels list`), for a parse error's hint:
 * the walk stops at the first word that is neither an option (nor an option's value) nor a command of the
 * level reached, so `opsctl trakcer labels list` points at `opsctl --help`, where the typo is.
 */
function commandPath(program: import('commander').Command, argv: readonly string[]): string {
  const names = ['opsctl'];
  let cmd = program;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (word === '--') break;
    if (word.startsWith('-')) {
      // an option that takes a value and was not given it attached (`--profile work`) takes the next word
      const takesValue = [cmd, program].some((c) => c.options.some((o) => (o.long === word || o.short === word) && (o.required || o.optional)));
      if (takesValue && !word.includes('=')) i++;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) break;
    names.push(sub.name());
    cmd = sub;
  }
  return names.join(' ');
}

/**
 * Errors are JSON on stderr with --json when stderr is not a terminal (a program reads it); on a
 * terminal a person reads them, as gh does: text. With --jq (which implies JSON output) they stay text.
 */
function jsonErrors(ctx: Context): boolean {
  return ctx.jsonOutput && ctx.globals.jq === undefined && !ctx.io.isStderrTTY;
}

function allCommands(cmd: import('commander').Command): import('commander').Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/**
 * A commander parse error (unknown option or command, missing or excess argument): exit 2. Commander
 * printed its text already unless --json was given; then it is `{"error":{code,message,hint?}}` on
 * stderr. A field list written as a separate word after --json gets a hint to attach it.
 */
function reportParseError(ctx: Context, err: CommanderError, argv: readonly string[], path = 'opsctl', program?: import('commander').Command): number {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
  if (err.code === 'commander.executeSubCommandAsync') return err.exitCode;
  const at = argv.indexOf('--json');
  const next = at >= 0 ? argv[at + 1] : undefined;
  const hint =
    next !== undefined && JSON_FIELD_LIST.test(next) && (err.code === 'commander.excessArguments' || next.includes(','))
      ? `--json takes no separate value; to pick fields attach them: --json=${next}`
      : undefined;
  const [first = '', ...rest] = err.message.replace(/^error: /, '').split('\n');
  // commander's "(Did you mean list?)" becomes part of the hint
  const suggestion = rest.map((l) => /^\(Did you mean (.+)\?\)$/.exec(l.trim())?.[1]).find(Boolean) ?? flagForWord(err, program, path);
  const message = suggestion ? `${first} (did you mean ${suggestion}?)` : [first, ...rest].join('\n');
  if (jsonErrors(ctx)) {
    const code = err.code.replace(/^commander\./, '').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    ctx.io.err(JSON.stringify({ error: { code: 'usage', reason: code, message, ...(hint ? { hint } : {}) } }));
  } else {
    ctx.io.err(`${ctx.io.colorErr.red('X')} ${ctx.io.safeErr(first)}`);
    const fix = hint ?? (suggestion ? `did you mean ${suggestion}? (see: ${path} --help)` : `see: ${path} --help`);
    ctx.io.err(`  ${ctx.io.safeErr(fix)}`);
  }
  return ExitCode.usage;
}

/** Top-level flags that do a whole job alone, so their bare word is a likely slip (`opsctl version`, as `kubectl version` or `etcdctl version`). */
const FLAG_WORDS: ReadonlySet<string> = new Set(['--version']);

/** `opsctl version`: the unknown command is a top-level flag written as a word (its suggestion: `opsctl --version`). */
function flagForWord(err: CommanderError, program: import('commander').Command | undefined, path: string): string | undefined {
  if (err.code !== 'commander.unknownCommand' || path !== 'opsctl' || !program) return undefined;
  const word = /unknown command '([^']+)'/.exec(err.message)?.[1];
  const flag = word ? `--${word}` : undefined;
  return flag && FLAG_WORDS.has(flag) && program.options.some((o) => o.long === flag) ? `opsctl ${flag}` : undefined;
}

/** The one top-level error handler: a message, a hint, the right exit code; JSON on stderr with --json. */
export function reportError(ctx: Context, err: unknown): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
    if (err.code === 'commander.executeSubCommandAsync') return err.exitCode;
    // commander already printed the message
    if (jsonErrors(ctx)) ctx.io.err(JSON.stringify({ error: { code: 'usage', message: err.message.replace(/^error: /, '') } }));
    return ExitCode.usage;
  }
  // Ctrl-C / SIGTERM to a verb that does not stop at a safe point: the signal's notice said it all;
  // whatever failed because of it (a request cut off, a lock wait ended) is not another error.
  if (ctx.abort.signal.aborted && !ctx.handlesInterrupt) return ExitCode.interrupted;
  if (isOpsError(err)) {
    printError(ctx, err);
    return err.exitCode;
  }
  const e = err as Error;
  if (jsonErrors(ctx)) ctx.io.err(JSON.stringify({ error: { code: 'internal', message: e?.message ?? String(err) } }));
  else {
    ctx.io.err(`${ctx.io.colorErr.red('X')} unexpected error: ${ctx.io.safeErr(e?.message ?? String(err))}`);
    ctx.io.err(ctx.debugEnabled ? String(e?.stack) : 'run again with --debug for details, and please report it');
  }
  return ExitCode.failure;
}

function printError(ctx: Context, err: OpsError): void {
  if (jsonErrors(ctx)) {
    const hint = hintFor(ctx, err);
    ctx.io.err(JSON.stringify({ error: { ...err.toJSON(), ...(hint ? { hint } : {}) } }));
    return;
  }
  // messages and hints often carry a server's words: on a terminal its control characters are shown, not obeyed
  ctx.io.err(`${ctx.io.colorErr.red('X')} ${ctx.io.safeErr(err.message)}`);
  const hint = hintFor(ctx, err);
  if (hint) ctx.io.err(`  ${ctx.io.safeErr(hint)}`);
  if (ctx.debugEnabled && err.cause) ctx.io.err(causeText(err.cause));
}

/** An error's hint, its commands carrying the `--profile` the failed command was given (see core/hints.ts). */
function hintFor(ctx: Context, err: OpsError): string | undefined {
  return err.hint === undefined ? undefined : withProfileFlag(err.hint, ctx.globals.profile);
}

/** An error's cause for --debug: its stack when it is an Error. */
function causeText(cause: unknown): string {
  return cause instanceof Error ? (cause.stack ?? String(cause)) : String(cause);
}

/**
 * What the signal handler says. A verb that watches `ctx.abort` (kv upgrade, apply, upload) gets a
 * first signal as a request to stop at its next safe point; a second one, or any signal to a verb
 * that does not watch, ends the process at once with 130. The words say which signal came (Ctrl-C
 * or SIGTERM), and only Ctrl-C is offered as a way to quit at once.
 */
export function signalNotice({ signal, count, safePoint }: { signal: NodeJS.Signals; count: number; safePoint: boolean }): string {
  const what = signal === 'SIGINT' ? 'interrupted' : signal === 'SIGTERM' ? 'terminated (SIGTERM)' : `stopped (${signal})`;
  if (safePoint && count === 1) {
    return `${what}: stopping at the next safe point${signal === 'SIGINT' ? '; press Ctrl-C again to quit at once' : ''}`;
  }
  if (count > 1) return `${what} again: quitting now`;
  return what;
}

/**
 * `opsctl --help` (or `-h`) and nothing else: commander prints the top-level help, the same text main()
 * prints, without the command context (its streams, paths and config), which it never reads.
 */
async function topLevelHelp(argv: readonly string[], onStreamError: (name: 'stdout', err: NodeJS.ErrnoException) => void): Promise<boolean> {
  if (argv.length !== 1 || (argv[0] !== '--help' && argv[0] !== '-h')) return false;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => onStreamError('stdout', err));
  (await buildProgram(undefined, argv)).outputHelp();
  return true;
}

function lastWordsOf(ctx: WiredContext | undefined): string | undefined {
  try {
    return ctx?.lastWords?.();
  } catch {
    return undefined;
  }
}

/** Written at once to stderr, else (a closed pipe) to the controlling terminal; nothing when neither can be written. */
function sayOnTheWayOut(text: string, { stderrGone }: { stderrGone: boolean }): void {
  const { closeSync, openSync, writeSync } = process.getBuiltinModule('node:fs');
  const line = `\n! ${text}\n`;
  if (!stderrGone) {
    try {
      writeSync(2, line);
      return;
    } catch {
      // a closed pipe: the terminal below
    }
  }
  try {
    const fd = openSync('/dev/tty', 'w');
    try {
      writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
  } catch {
    // no terminal either: the journal keeps what a re-run needs
  }
}

/** The process entry point (bin/opsctl.cjs): signals, exit code, and a guard against a hung event loop. */
export async function run(overrides: ContextOverrides = {}): Promise<void> {
  // Process-wide settings belong here, the entry point, never in library code: the AWS SDK's notice about
  // the Node versions its later releases will drop is not the operator's business in a backup's output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // WebAssembly (undici's HTTP parser, jq) compiled by Liftoff only: V8's second, optimising compile on
  // background threads costs a short-lived command more CPU than it saves. Set when the first module
  // that brings some is about to compile it (core/wasm.ts), so other commands never load node:v8.
  onFirstWasm(() => {
    const launcher = globalThis as Record<symbol, unknown>;
    // the code bin/load.cjs compiled so far is cached now, with the flags it was compiled under
    const flush = launcher[Symbol.for('opsctl.code-cache.flush')];
    if (typeof flush === 'function') (flush as () => void)();
    process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
    // bin/load.cjs keeps the code it compiles from now on in a cache of its own (V8 keys cached code by its flags)
    launcher[Symbol.for('opsctl.v8.liftoff-only')] = true;
  });
  // An upload to an s3:// place streams gigabytes through short-lived objects (each part's request and
  // answer): V8 would grow its young generation to 16 MB and more for them, and the process with it. Kept
  // at its first size (more, smaller scavenges), the process stays flat whatever the snapshot's size: a
  // 1,260 MiB snapshot's `kv snapshot save --to` peaked at 104 MB without it (budget 100 MB). Set here, at
  // the start, only for a command line naming an s3:// place (other commands keep V8's defaults).
  if (process.argv.slice(2).some((a) => /(^|=)s3:\/\//i.test(a))) {
    try {
      (await import('node:v8')).setFlagsFromString('--semi-space-growth-factor=1');
    } catch {
      // an engine without the flag only uses more memory
    }
  }
  // A pipe closed under a verb that left the person something to do (a member down): its last words are
  // said where the person is (the terminal), and the verb's own exit code stands.
  let stderrGone = false;
  let ctx: WiredContext | undefined;
  // (on the streams the context's io makes, when it makes them: making process.stdout alone loads node:net and
  // the streams, and most commands never write stderr)
  const onStreamError = (name: 'stdout' | 'stderr', err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') return;
    if (name === 'stderr') stderrGone = true;
    else if (!ctx?.lastWords) process.exit(ExitCode.ok);
  };
  if (await topLevelHelp(process.argv.slice(2), onStreamError)) return;
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    const safePoint = Boolean(ctx?.handlesInterrupt);
    // the spinner line goes first, so the notice is not drawn over (and no progress follows it)
    if (!safePoint || interrupts > 1) ctx?.io.endProgress();
    const notice = signalNotice({ signal, count: interrupts, safePoint });
    if (ctx) ctx.io.err(`\n${ctx.io.colorErr.yellow('!')} ${notice}`);
    else process.stderr.write(`\n${notice}\n`);
    ctx?.abort.abort(signal);
    if (safePoint && interrupts === 1) return;
    const words = lastWordsOf(ctx);
    if (words) sayOnTheWayOut(words, { stderrGone });
    void (ctx?.cleanup() ?? Promise.resolve()).finally(() => process.exit(ExitCode.interrupted));
    setTimeout(() => process.exit(ExitCode.interrupted), 1500).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await main(process.argv.slice(2), overrides, (c) => {
    ctx = c;
    c.io.onStreamError = onStreamError;
  });
  process.exitCode = code;
  // (its error and hint went to a stderr that was closed under it: the person still learns what is left)
  const words = stderrGone && code !== ExitCode.ok ? lastWordsOf(ctx) : undefined;
  if (words) sayOnTheWayOut(words, { stderrGone: true });
  // Everything has been closed; if a stray handle keeps the loop alive, do not hang a script.
  setTimeout(() => process.exit(code), 3000).unref();
}

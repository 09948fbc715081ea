import { Command, Option } from 'commander';
import type { Context } from './context.js';
import { NOUN_SUMMARIES, type NounName } from './commands/nouns.js';

declare const __OPSCTL_VERSION__: string;
export const VERSION = typeof __OPSCTL_VERSION__ === 'string' ? __OPSCTL_VERSION__ : '0.0.0-dev';

/** A noun's module: `register` builds its subtree; `wholeTree` asks for every level at once (help, completion). */
interface NounModule {
  register(program: Command, ctx: Context, wholeTree: boolean): void;
}

/**
 * Every top-level command (order = order in --help) and its register() module, imported only when the
 * command line names that noun: `--version` and `--help` load commander and this file, nothing else.
 */
const NOUNS: ReadonlyArray<[NounName, () => Promise<NounModule>]> = [
  ['login', () => import('./commands/login/index.js')],
  ['logout', () => import('./commands/logout/index.js')],
  ['auth', () => import('./commands/auth/index.js')],
  ['api', () => import('./commands/api/index.js')],
  ['tracker', () => import('./commands/tracker/index.js')],
  ['labels', () => import('./commands/labels/index.js')],
  ['kv', () => import('./commands/kv/index.js')],
  ['config', () => import('./commands/config/index.js')],
  ['mock', () => import('./commands/mock/index.js')],
  ['demo', () => import('./commands/demo/index.js')],
  ['completion', () => import('./commands/completion/index.js')],
  ['help', () => import('./commands/help/index.js')],
];

/**
 * The commander tree; verbs load lazily. With `argv`, only the noun it names is built in full (the
 * others are one-line placeholders for --help); without it (completions, tests), or for `help` and
 * `completion`, the whole tree is built.
 */
export async function buildProgram(ctx: Context, argv?: readonly string[]): Promise<Command> {
  const wanted = argv?.find((word) => NOUNS.some(([name]) => name === word));
  const program = new Command('opsctl');
  program.description('One CLI for operators: OAuth sign-in, work-tracker and label scripting, and safe rolling kv (etcd) upgrades.');
  // `-V, --version` belongs to opsctl only before a command word: after one it is that command's own
  // flag (`opsctl kv sandbox up --version 3.2`), since commander would otherwise take it anywhere.
  if (!wanted) program.version(VERSION, '-V, --version', 'print the version');
  program
    .addOption(new Option('--json [fields]', 'print JSON (optionally only these comma-separated fields)'))
    .option('--no-input', 'never prompt; fail instead, naming the flag that answers')
    .option('-y, --yes', 'answer yes to confirmations')
    .option('--debug', 'log HTTP requests (secrets redacted) and internals to stderr')
    .option('--profile <name>', 'the profile to use (default: the configured one, else "embedded")')
    .helpCommand(false)
    .showSuggestionAfterError(true)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText(
      'after',
      `
Examples:
  $ opsctl tracker labels list
  $ opsctl tracker labels create --name bug --color "#ff0000"
  $ opsctl mock serve --port 8080
  $ opsctl help exit-codes

With no configuration every command uses the embedded mock services (profile "embedded").`,
    );
  program.hook('preAction', () => {
    ctx.globals = program.opts();
  });

  const everything = !argv || wanted === 'help' || wanted === 'completion';
  for (const [name, load] of NOUNS) {
    if (everything || name === wanted) (await load()).register(program, ctx, everything);
    else program.command(name).description(NOUN_SUMMARIES[name]);
  }
  return program;
}

import { Command, Option } from 'commander';
import type { Context } from './context.js';
import { register as registerApi } from './commands/api/index.js';
import { register as registerAuth } from './commands/auth/index.js';
import { register as registerCompletion } from './commands/completion/index.js';
import { register as registerConfig } from './commands/config/index.js';
import { register as registerDemo } from './commands/demo/index.js';
import { register as registerHelp } from './commands/help/index.js';
import { register as registerLogin } from './commands/login/index.js';
import { register as registerLogout } from './commands/logout/index.js';
import { register as registerLabels } from './commands/labels/index.js';
import { register as registerMock } from './commands/mock/index.js';
import { NOUN_SUMMARIES, type NounName } from './commands/nouns.js';
import { register as registerTracker } from './commands/tracker/index.js';

declare const __OPSCTL_VERSION__: string;
export const VERSION = typeof __OPSCTL_VERSION__ === 'string' ? __OPSCTL_VERSION__ : '0.0.0-dev';

/** Builds a noun's subtree; `wholeTree` asks for every level at once (help, completion, tests). */
type Register = (program: Command, ctx: Context, wholeTree: boolean) => void;

/** Every top-level command and the function that builds its subtree (order = order in --help). */
const NOUNS: ReadonlyArray<[NounName, Register]> = [
  ['login', registerLogin],
  ['logout', registerLogout],
  ['auth', registerAuth],
  ['api', registerApi],
  ['tracker', registerTracker],
  ['labels', registerLabels],
  ['config', registerConfig],
  ['mock', registerMock],
  ['demo', registerDemo],
  ['completion', registerCompletion],
  ['help', registerHelp],
];

/**
 * The commander tree. Only commander and each noun's register() are imported here: verbs load lazily.
 * With `argv`, only the noun it names is built in full (others are one-line placeholders for --help);
 * without it (completions, tests), or for `help`/`completion`, the whole tree is built.
 */
export function buildProgram(ctx: Context, argv?: readonly string[]): Command {
  const program = new Command('opsctl');
  program
    .description('One CLI for operators: OAuth sign-in, work-tracker and label scripting, and safe rolling kv (etcd) upgrades.')
    .version(VERSION, '-V, --version', 'print the version')
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

  const wanted = argv?.find((word) => NOUNS.some(([name]) => name === word));
  const everything = !argv || wanted === 'help' || wanted === 'completion';
  for (const [name, register] of NOUNS) {
    if (everything || name === wanted) register(program, ctx, everything);
    else program.command(name).description(NOUN_SUMMARIES[name]);
  }
  return program;
}

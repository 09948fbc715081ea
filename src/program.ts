import { Command, Option } from 'commander';
import type { Context, GlobalOptions } from './context.js';
import { NOUN_SUMMARIES, type NounName } from './commands/nouns.js';
import { VERSION } from './core/version.js';

export { VERSION };

/** A field list as `--json` takes it: names (dotted for nested) separated by commas. */
export const JSON_FIELD_LIST = /^[A-Za-z_][\w.]*(,[A-Za-z_][\w.]*)*$/;

/** The hidden option `--json=FIELDS` is rewritten to (see splitJsonFlag). */
const JSON_FIELDS_FLAG = '--json-fields';

/**
 * `--json` is a plain flag: it never takes the next word, so `opsctl --json tracker epics list` and
 * `tracker epics get --json 1` parse as written. Fields are picked when attached (`--json=id,name`),
 * or, as gh writes them, as the next word when it is a comma-separated list of names (`--json id,name`;
 * a single name after it is taken when the command has no room for it: see cli.ts). Commander cannot give one option both behaviours (bare = flag, attached = value),
 * so the attached form is renamed to a hidden option before parsing. Words after `--` are left alone.
 * Returns the argv to parse and whether JSON output was asked for (parse errors are then JSON too).
 */
export function splitJsonFlag(argv: readonly string[]): { argv: string[]; json: boolean } {
  let json = false;
  let skip = false;
  const out: string[] = [];
  for (const [i, word] of argv.entries()) {
    if (skip) {
      skip = false;
      continue;
    }
    if (word === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (word === '--json') json = true;
    // gh's `--json id,name`: a comma-separated list of field names after it is its field list
    const next = argv[i + 1];
    if (word === '--json' && next !== undefined && next.includes(',') && JSON_FIELD_LIST.test(next)) {
      out.push(`${JSON_FIELDS_FLAG}=${next}`);
      skip = true;
      continue;
    }
    if (word.startsWith('--json=')) {
      json = true;
      out.push(`${JSON_FIELDS_FLAG}=${word.slice('--json='.length)}`);
    } else out.push(word);
  }
  return { argv: out, json };
}

/**
 * A noun's module: `register` builds its subtree; `wholeTree` asks for every level at once (help, completion); `argv`,
 * the command line, lets it build only the branch the line names.
 */
interface NounModule {
  register(program: Command, ctx: Context, opts: { wholeTree: boolean; argv?: readonly string[]; everyFlag?: boolean }): void | Promise<void>;
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
 * `completion`, the whole tree is built. Without a context only the top level can be built (what
 * `opsctl --help` prints). A noun may build the verb a line names with only the options that line can use
 * (spec.ts addVerb's `line`); `everyFlag` asks for every option (main(), after a parse error on such a verb).
 */
export async function buildProgram(ctx: Context | undefined, argv?: readonly string[], { everyFlag = false }: { everyFlag?: boolean } = {}): Promise<Command> {
  const wanted = argv?.find((word) => NOUNS.some(([name]) => name === word));
  const program = new Command('opsctl');
  program.description('One CLI for operators: OAuth sign-in, work-tracker and label scripting, and safe rolling kv (etcd) upgrades.');
  // `-V, --version` belongs to opsctl only before a command word: after one it is that command's own
  // flag (`opsctl kv sandbox up --version 3.2`), since commander would otherwise take it anywhere.
  if (!wanted) program.version(VERSION, '-V, --version', 'print the version');
  program
    .addOption(new Option('--json', 'print JSON; only some fields: --json=id,name (attached: --json never takes the next word)'))
    .addOption(new Option(`${JSON_FIELDS_FLAG} <fields>`).hideHelp())
    .option('--jq <expression>', "filter the JSON output through a jq expression (implies --json; strings print raw), e.g. --jq '.[].name'")
    .option('--no-input', 'never prompt; fail instead, naming the flag that answers')
    .option('-y, --yes', 'answer yes to confirmations')
    .option('--debug', 'log HTTP requests (secrets redacted) and internals to stderr')
    .option('--profile <name>', 'the profile to use (default: the configured one, else "embedded")')
    .addOption(new Option('--force-request', 'send an api or labels request even when the sign-in was not granted the scope it needs').hideHelp())
    .helpCommand(false)
    .showSuggestionAfterError(true)
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      optionTerm: (option) => (option.long === '--json' ? '--json[=fields]' : option.flags),
    })
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
    if (!ctx) return;
    const { jsonFields, ...globals } = program.opts<GlobalOptions & { jsonFields?: string }>();
    ctx.globals = jsonFields === undefined ? globals : { ...globals, json: jsonFields };
    // --jq implies JSON: verbs that print a plan or report for people print data instead
    if (ctx.globals.jq !== undefined && ctx.globals.json === undefined) ctx.globals.json = true;
  });

  const everything = !argv || wanted === 'help' || wanted === 'completion';
  for (const [name, load] of NOUNS) {
    if (everything || name === wanted) {
      if (!ctx) throw new Error(`buildProgram: the ${name} commands need a context`);
      await (await load()).register(program, ctx, { wholeTree: everything, argv, everyFlag });
    } else program.command(name).description(NOUN_SUMMARIES[name]);
  }
  // the hidden command the completion scripts call for names the service knows (opt-in dynamic completion)
  if (ctx && argv?.[0] === '__complete') (await import('./commands/completion/index.js')).registerComplete(program, ctx);
  return program;
}

import { Command, Option } from 'commander';
import type { Context } from './context.js';
import { register as registerAuth } from './commands/auth/index.js';
import { register as registerCompletion } from './commands/completion/index.js';
import { register as registerConfig } from './commands/config/index.js';
import { register as registerDemo } from './commands/demo/index.js';
import { register as registerHelp } from './commands/help/index.js';
import { register as registerMock } from './commands/mock/index.js';
import { register as registerTracker } from './commands/tracker/index.js';
import { register as registerKv } from './commands/kv/index.js';

declare const __OPSCTL_VERSION__: string;
export const VERSION = typeof __OPSCTL_VERSION__ === 'string' ? __OPSCTL_VERSION__ : '0.0.0-dev';

/** The commander tree. Only commander and each noun's register() are imported here: verbs load lazily. */
export function buildProgram(ctx: Context): Command {
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

  registerAuth(program, ctx);
  registerTracker(program, ctx);
  registerKv(program, ctx);
  registerConfig(program, ctx);
  registerMock(program, ctx);
  registerDemo(program, ctx);
  registerCompletion(program, ctx);
  registerHelp(program, ctx);
  return program;
}

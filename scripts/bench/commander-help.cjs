// The floor of a commander-based `--help`, for npm run bench: a bare program with opsctl's global
// options and its 12 one-line commands prints its help, loading only dist/'s commander chunk (its path is
// argv[2]). What `opsctl --help` costs above this is opsctl's own start-up.
'use strict';
const { Command, Option } = chunk(process.argv[2]);
const program = new Command('opsctl')
  .description('One CLI for operators: OAuth sign-in, work-tracker and label scripting, and safe rolling kv (etcd) upgrades.')
  .version('0.0.0', '-V, --version', 'print the version')
  .addOption(new Option('--json', 'print JSON; only some fields: --json=id,name (attached: --json never takes the next word)'))
  .option('--jq <expression>', 'filter the JSON output through a jq expression')
  .option('--no-input', 'never prompt; fail instead, naming the flag that answers')
  .option('-y, --yes', 'answer yes to confirmations')
  .option('--debug', 'log HTTP requests (secrets redacted) and internals to stderr')
  .option('--profile <name>', 'the profile to use')
  .helpCommand(false)
  .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
  .exitOverride();
for (const name of ['login', 'logout', 'auth', 'api', 'tracker', 'labels', 'kv', 'config', 'mock', 'demo', 'completion', 'help'])
  program.command(name).description(`the ${name} commands`);
program.parseAsync(['--help'], { from: 'user' }).catch((err) => {
  if (err.code !== 'commander.helpDisplayed') throw err;
});

/**
 * The exports of the chunk `file`, compiled as Node's require would (no code cache) by bin/load.cjs: the build writes a
 * chunk as the function a CommonJS module is compiled as, which Node's require would run to nothing.
 */
function chunk(file) {
  const path = require('node:path');
  return require('../../bin/load.cjs')
    .createLoader(path.dirname(path.dirname(file)), { NODE_DISABLE_COMPILE_CACHE: '1' })
    .load(file);
}

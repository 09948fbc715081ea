import { PassThrough } from 'node:stream';
import { main } from '../../src/cli.js';
import type { Context } from '../../src/context.js';
import { IOStreams } from '../../src/core/io.js';

/**
 * opsctl's main() in this process, not awaited, with `env` (the tests' simulated member added, as runCli
 * does): what it said so far (stdout and stderr), Ctrl-C (`interrupt()`: its abort signal, as the SIGINT
 * handler would), and its exit code (`exited`).
 */
export function inProcess(argv: string[], env: Record<string, string>) {
  const sink = new PassThrough();
  let said = '';
  sink.on('data', (d: Buffer) => (said += String(d)));
  let ctx: Context | undefined;
  const io = new IOStreams({
    stdout: sink,
    stderr: sink,
    stdin: new PassThrough(),
    env: { NO_COLOR: '1' },
    stdoutTTY: false,
    stderrTTY: false,
    stdinTTY: false,
  });
  const member = process.env.OPSCTL_KV_MEMBER ? { OPSCTL_KV_MEMBER: process.env.OPSCTL_KV_MEMBER } : {};
  const exited = main(argv, { env: { ...member, ...env, NO_COLOR: '1' }, io }, (c) => (ctx = c));
  return {
    exited,
    said: () => said,
    interrupt: () => ctx!.abort.abort('SIGINT'),
  };
}

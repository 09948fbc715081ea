import type { IOStreams } from './io.js';

/** Why opsctl may not ask here, in the words a person needs: the flag given, the environment or the stream. */
export function whyNoPrompt(ctx: {
  env: NodeJS.ProcessEnv;
  io: Pick<IOStreams, 'isStdinTTY' | 'isStdoutTTY'> & Partial<Pick<IOStreams, 'isStderrTTY'>>;
  noInput: boolean;
}): string {
  if (ctx.noInput) return '--no-input forbids asking';
  if (ctx.env.CI) return 'CI is set (opsctl never asks in CI)';
  if (!ctx.io.isStdinTTY) return 'standard input is not a terminal to ask on';
  if (!ctx.io.isStdoutTTY) return 'standard output is not a terminal to ask on';
  // (the question goes to stderr, or to /dev/tty when stderr is redirected: neither was there)
  if (ctx.io.isStderrTTY === false) return 'standard error is redirected and there is no terminal (/dev/tty) to ask on';
  return 'there is no terminal to ask on';
}

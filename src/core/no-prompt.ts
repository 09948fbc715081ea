import type { IOStreams } from './io.js';

/** Why opsctl may not ask here, in the words a person needs: the flag given, the environment or the stream. */
export function whyNoPrompt(ctx: { env: NodeJS.ProcessEnv; io: Pick<IOStreams, 'isStdinTTY' | 'isStdoutTTY'>; noInput: boolean }): string {
  if (ctx.noInput) return '--no-input forbids asking';
  if (ctx.env.CI) return 'CI is set (opsctl never asks in CI)';
  if (!ctx.io.isStdinTTY) return 'standard input is not a terminal to ask on';
  if (!ctx.io.isStdoutTTY) return 'standard output is not a terminal to ask on';
  return 'there is no terminal to ask on';
}

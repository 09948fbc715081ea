import { PassThrough } from 'node:stream';
import { MockAgent } from 'undici';
import { createContext, type WiredContext } from '../../src/wiring/context.js';
import { IOStreams } from '../../src/core/io.js';

/**
 * A verb's `run(opts, ctx)` against a fake HTTP client, as gh tests its run functions with httpmock: an
 * undici MockAgent answers every request (a request nobody registered fails the test), the context has
 * captured streams and no terminal, and nothing starts: no mock server, no child process, no socket.
 */
export interface VerbHarness {
  ctx: WiredContext;
  agent: MockAgent;
  stdout(): string;
  stderr(): string;
  /** Fails when a registered answer was never asked for; closes the agent. */
  verify(): Promise<void>;
}

export function verbHarness(env: NodeJS.ProcessEnv): VerbHarness {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const out: string[] = [];
  const err: string[] = [];
  const stdout = new PassThrough().on('data', (c: Buffer) => out.push(c.toString()));
  const stderr = new PassThrough().on('data', (c: Buffer) => err.push(c.toString()));
  const stdin = new PassThrough().end('');
  const fullEnv = { NO_COLOR: '1', CI: '1', ...env };
  const io = new IOStreams({ stdin, stdout, stderr, env: fullEnv, stdinTTY: false, stdoutTTY: false, stderrTTY: false });
  const ctx = createContext({ env: fullEnv, io, dispatcher: agent, openBrowser: () => Promise.resolve(false) });
  return {
    ctx,
    agent,
    stdout: () => out.join(''),
    stderr: () => err.join(''),
    async verify() {
      agent.assertNoPendingInterceptors();
      await agent.close();
      await ctx.cleanup();
    },
  };
}

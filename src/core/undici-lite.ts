/**
 * The two pieces of undici opsctl uses, imported from their own modules: undici's index eagerly loads
 * every feature (fetch, websockets, caches, mocks), which costs ~50 ms of start-up on every command.
 * Any undici Dispatcher works with `request`, including a test's MockAgent.
 */
// @ts-expect-error undici ships no declarations for its internal modules; typed below
import AgentImpl from 'undici/lib/dispatcher/agent.js';
// @ts-expect-error see above
import requestImpl from 'undici/lib/api/api-request.js';
// @ts-expect-error see above
import buildConnectorImpl from 'undici/lib/core/connect.js';
import type { Agent as AgentType, Dispatcher } from 'undici';
import { beforeWasm } from './wasm.js';

// undici parses HTTP with a WebAssembly build of llhttp, compiled at the first connection
beforeWasm();

export const Agent = AgentImpl as typeof AgentType;
export type Agent = AgentType;
/** undici's socket connector (TLS options in), to wrap when the sockets themselves are of interest. */
export const buildConnector = buildConnectorImpl as typeof import('undici').buildConnector;

export type UndiciRequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher };

/** undici's `request(url, options)`: one request through the given dispatcher. */
export function request(url: URL, opts: UndiciRequestOptions): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = opts;
  return (requestImpl as (this: Dispatcher, o: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>).call(dispatcher, {
    ...rest,
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
  });
}

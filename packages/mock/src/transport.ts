/**
 * How a client in the same process hands the mock a request (the embedded adapter's transport): the
 * shape of opsctl's HttpClient transport, written here so the mock needs nothing of the CLI.
 */
export interface TransportRequest {
  method: string;
  headers: Record<string, string>;
  /** A string (or none) is answered in process; anything else (a FormData upload) goes over the network. */
  body?: unknown;
  /** The request's deadline (the whole exchange). */
  signal: AbortSignal;
  /** The same deadline told without an AbortSignal (opsctl's HttpClient makes one only for a transport that reads `signal`). */
  abort?: { readonly aborted: boolean; readonly reason: unknown; onAbort(fn: () => void): () => void };
  timeoutMs?: number;
}

/** What a transport gives back: the status, the headers, and a body read once. */
export interface TransportResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array> & { text(): Promise<string>; destroy(): void };
}

export type Transport = (url: URL, req: TransportRequest) => Promise<TransportResponse>;

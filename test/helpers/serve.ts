import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { runBin } from './bin.js';

/** The origin a `opsctl mock serve --json` child prints on its first complete stdout line. */
export function serveUrl(serve: ReturnType<typeof runBin>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line).url as string);
    });
    void serve.then((r) => reject(new Error(`mock serve exited ${r.exitCode} (run npm run build first): ${String(r.stderr)}`)));
  });
}

/** A loopback port with nobody listening on it (bound, read and released). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/** A push receiver of security events (RFC 8935) on loopback: records each body and answers 202. */
export async function startReceiver(port = 0): Promise<{ port: number; received: string[]; close: () => Promise<void> }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(body);
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

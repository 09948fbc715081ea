import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadSpec, type SpecChecker } from './shortcut-spec.js';

/**
 * A validating gateway in front of the tracker mock, in strict mode: every request is checked against
 * the real OpenAPI document (ajv driven by shared/ref/shortcut-openapi.json through shortcut-spec.ts,
 * independent of packages/shared/src/tracker) before it is forwarded, and every answer after: a body where none is
 * declared, a missing required body, an undeclared field or query parameter, a response or typed error
 * off its schema — each is recorded as a problem (and the request is refused with 422, as a real
 * gateway would). The only differences allowed are the seed's renames (shortcut-spec.ts lists them).
 */
export interface ValidatingProxy {
  url: string;
  problems: string[];
  /** `METHOD /template` of every operation that went through. */
  seen: Set<string>;
  close(): Promise<void>;
}

function read(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startValidatingProxy(target: string, spec: SpecChecker = loadSpec()): Promise<ValidatingProxy> {
  const problems: string[] = [];
  const seen = new Set<string>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await read(req);
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const bare = path.split('?')[0] ?? '';
      const isApi = bare.startsWith('/api/v3/') && bare !== '/api/v3/openapi.json';
      const contentType = String(req.headers['content-type'] ?? '');
      const multipart = /^multipart\//i.test(contentType);
      if (isApi) {
        const op = spec.operation(method, bare);
        if (op) seen.add(`${method} ${op.template}`);
        const found = spec.checkRequest(method, path, multipart ? '' : raw.toString('utf8'), contentType);
        if (found.length) {
          problems.push(...found);
          res.writeHead(422, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: `refused by the validating proxy: ${found.join('; ')}` }));
          return;
        }
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
      const upstream = await fetch(`${target}${path}`, { method, headers, body: raw.length ? new Uint8Array(raw) : undefined });
      const text = await upstream.text();
      if (isApi) {
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = text;
        }
        if (upstream.status < 300) problems.push(...spec.check(method, bare, upstream.status, json));
        else problems.push(...spec.checkError(method, bare, upstream.status, json));
      }
      const out: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k)) out[k] = v;
      });
      res.writeHead(upstream.status, out);
      res.end(text);
    })().catch((err: unknown) => {
      problems.push(`proxy: ${String(err)}`);
      res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    problems,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

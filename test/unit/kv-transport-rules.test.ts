import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { KvSession } from '../../src/kv/cluster/session.js';

/** What a kv request says when the port answers, but not in HTTP (an ssh port, a peer URL). */
describe('a kv endpoint that answers in another protocol', () => {
  it('is "not an HTTP answer", with the bytes it sent and the client-URL fix, not "unreachable"', async () => {
    const server = createServer((socket) => {
      socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const err = (await new KvClient(endpoint, { session: new KvSession(), timeoutMs: 5000 }).version().catch((e: unknown) => e)) as Error & { hint?: string };
      expect(err.message).toBe(`${endpoint}: not an HTTP answer (the answer does not start with an HTTP/1.x status line: "SSH-2.0-OpenSSH_9.2")`);
      expect(err.hint).toMatch(/client URL/);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

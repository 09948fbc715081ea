import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/kv/sandbox/sandbox.js';

const RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

describe('sandbox member ports', () => {
  it.runIf(existsSync(RANGE))(
    'are free and below the ephemeral range, so no outgoing connection or port-0 listener takes one while its member restarts',
    async () => {
      const low = Number(readFileSync(RANGE, 'utf8').trim().split(/\s+/)[0]);
      const ports = await Promise.all(Array.from({ length: 8 }, () => freePort()));
      for (const port of ports) {
        expect(port).toBeGreaterThanOrEqual(10_000);
        expect(port).toBeLessThan(low);
        // Still free: it can be bound on 127.0.0.1.
        await new Promise<void>((resolve, reject) => {
          const srv = createServer().once('error', reject);
          srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
        });
      }
    },
  );
});

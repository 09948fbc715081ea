import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';

/**
 * Issue 27, item 10d, through the built binary: prototype names (`__proto__`, `constructor`, `prototype`)
 * and any key outside the known set are refused as config keys by `config set/get/unset` (exit 2, nothing
 * written), and as a new profile's name; `api -f __proto__=x` sends the field like any other.
 */
let dir: string;
let n = 0;
async function run(args: string[], configDir: string, extra: NodeJS.ProcessEnv = {}) {
  const r = await runBin(args, { env: { OPSCTL_CONFIG_DIR: configDir, ...extra } });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-keys-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('config keys are the known set, own names only', () => {
  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'])('config set/get/unset %s', async (key) => {
    const cfg = join(dir, `c${n++}`);
    const set = await run(['config', 'set', key, 'https://api.example.com', '--profile', 'p'], cfg);
    expect(set.code).toBe(2);
    expect(set.stderr).toContain(`"${key}"`);
    expect(set.stderr).toContain('known keys: profile, issuer');
    expect(existsSync(join(cfg, 'config.json'))).toBe(false);
    for (const verb of ['get', 'unset']) {
      const r = await run(['config', verb, key, '--profile', 'p'], cfg);
      expect(r.code, `${verb} ${key}`).toBe(2);
      expect(r.stderr).toContain(`"${key}"`);
    }
  });

  it('a known key still works, and a prototype name is not a profile name', async () => {
    const cfg = join(dir, 'ok');
    expect((await run(['config', 'set', 'tracker', 'https://t.example.com', '--profile', 'p'], cfg)).code).toBe(0);
    expect((await run(['config', 'get', 'tracker', '--profile', 'p'], cfg)).stdout.trim()).toBe('https://t.example.com');
    const proto = await run(['config', 'set', 'tracker', 'https://t.example.com', '--profile', 'constructor'], cfg);
    expect(proto.code).toBe(2);
    expect(proto.stderr).toContain('"constructor" is a reserved name');
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'))).toEqual({ profiles: { p: { tracker: 'https://t.example.com' } } });
  });

  it('api -f __proto__=x is a body field like any other', async () => {
    // a bare server that keeps the body it was sent
    let body = '';
    const server = createServer((req, res) => {
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await run(['api', '-X', 'POST', '/x', '-f', '__proto__=x', '-f', 'a=1'], join(dir, 'api'), { OPSCTL_API_URL: url, OPSCTL_ACCESS_TOKEN: 'tok' });
      expect(r.code, r.stderr).toBe(0);
      expect(body).toBe('{"__proto__":"x","a":"1"}');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

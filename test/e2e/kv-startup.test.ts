import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

const HOOKS = fileURLToPath(new URL('../helpers/record-modules.cjs', import.meta.url));

/**
 * What a kv verb loads (issue 47's speed: a verb an operator runs in loops) and the code cache that makes
 * a second run cheap, through the built binary. A member's JSON gateway is played by a small server (the
 * answers of etcd 3.4's /v3/kv/range), so this needs no etcd.
 */
describe('kv verbs load only what they use; the code cache stays as written', () => {
  let gateway: Server;
  let url = '';
  beforeAll(async () => {
    const header = { cluster_id: '1', member_id: '2', revision: '3', raft_term: '4' };
    // etcd 3.4's answers: what kv get, kv status and kv endpoint health ask of a member
    const answers: Record<string, unknown> = {
      '/version': { etcdserver: '3.4.23', etcdcluster: '3.4.0' },
      '/v3/kv/range': { header, kvs: [{ key: 'Zm9v', value: 'YmFy', create_revision: '3', mod_revision: '3', version: '1' }], count: '1' },
      '/v3/maintenance/status': { header, version: '3.4.23', dbSize: '20480', leader: '2', raftIndex: '9', raftTerm: '4' },
      '/v3/maintenance/alarm': { header },
      '/v3/cluster/member/list': { header, members: [{ ID: '2', name: 'etcd1', peerURLs: ['http://127.0.0.1:2380'], clientURLs: [] }] },
    };
    gateway = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const answer = answers[req.url ?? ''];
        res.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' });
        res.end(answer ? JSON.stringify(answer) : '404 page not found\n');
      });
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => gateway.close(() => r())));

  // kv status and kv endpoint health, the verbs that ask every member most, load what kv get loads but their own run
  it.each([
    { verb: ['get', 'foo'], out: /^bar$/ },
    { verb: ['status'], out: /^127\.0\.0\.1:\d+\thttp:\/\/127\.0\.0\.1:\d+\t2\t3\.4\.23\t3\.4\.0\ttrue\t3\ttrue\t$/ },
    { verb: ['endpoint', 'health'], out: /^127\.0\.0\.1:\d+\ttrue\t[\d.]+ ms\t$/ },
  ])(
    'kv $verb: its own spec and run alone; no undici, execa, zod or yaml; no member driver, sandbox, journal, snapshot, labels, tracker or auth code; at most 8 files; no node:v8, http, https, child_process or os',
    async ({ verb, out }) => {
      const cfg = tempConfigDir('opsctl-kv-startup-');
      try {
        const r = await execa(process.execPath, ['--require', HOOKS, BIN, 'kv', ...verb, '--endpoints', url], {
          env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_RECORD_MODULES: '1' },
          reject: false,
        });
        expect(r.exitCode, String(r.stderr)).toBe(0);
        expect(String(r.stdout)).toMatch(out);
        const err = String(r.stderr).split('\n');
        const builtins = new Set<string>(JSON.parse(err.find((l) => l.startsWith('builtins '))!.slice('builtins '.length)) as string[]);
        const packages = new Set<string>();
        const sources = new Set<string>();
        // each chunk run, from its own file or the copy another chunk's file carries (scripts/pack-chunks.mjs)
        for (const line of err.filter((l) => l.startsWith('ran ') && l.includes('/dist/'))) {
          const map = JSON.parse(readFileSync(`${fileURLToPath(line.slice('ran '.length))}.map`, 'utf8')) as { sources: string[] };
          for (const src of map.sources) {
            const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
            if (m) packages.add(m[1]!);
            else sources.add(src.replace(/^.*?(src\/)/, '$1'));
          }
        }
        for (const p of ['undici', 'execa', 'zod', 'yaml', 'write-file-atomic']) expect(packages.has(p), p).toBe(false);
        for (const s of sources) expect(s, s).not.toMatch(/^src\/kv\/(drivers|snapshot|journal|upgrade|ladder|local\/sandbox\.ts)/);
        // each loads its own verb's run alone
        const file = verb.filter((w) => w !== 'foo').join('-');
        const runs = [...sources].filter((s) => /^src\/commands\/kv\/[^/]+\.ts$/.test(s) && !/(\.spec|\/index|\/verb-index)\.ts$/.test(s));
        expect(runs).toEqual([`src/commands/kv/${file}.ts`]);
        // and its own spec alone (src/commands/kv/verb-index.ts loads it): none of the other 38 verbs' specs, nor the
        // noun's table of them all (noun.ts), is loaded or built
        expect([...sources].filter((s) => s.endsWith('.spec.ts'))).toEqual([`src/commands/kv/${file}.spec.ts`]);
        expect(sources.has('src/commands/kv/noun.ts')).toBe(false);
        expect(sources.has('src/commands/kv/lib/shared.ts')).toBe(false);
        // nothing of the other nouns: the label schema, the tracker's tables, sign-in (issue 47: config/services.ts once pulled in the label schema)
        // (packages/shared/src/… is named src/… here; of the labels, only the API versions a profile may name, labels/versions.ts)
        for (const s of sources) expect(s, s).not.toMatch(/^src\/(labels\/(?!versions\.ts$)|tracker\/|auth\/|commands\/(labels|tracker|auth|login)\/)/);
        // and a file per lazily loaded part, not per chunk: the chunks run come from at most 8 files (issue 47: 49 before)
        const files = err.filter((l) => l.startsWith('loaded ') && l.includes('/dist/'));
        expect(files.length, files.join('\n')).toBeLessThanOrEqual(8);
        // (perf_hooks: the global `performance` loads nine built-ins; the kv client keeps time with process.hrtime;
        // http: an answer read whole goes over core/wire-transport.ts, HTTP/1.1 on node:net, not Node's HTTP client)
        // (os: the config and data directories are resolved when asked, and a verb given --endpoints never asks)
        for (const b of ['v8', 'https', 'tls', 'child_process', 'perf_hooks', 'http', '_http_client', '_http_agent', 'os'])
          expect(builtins.has(b), b).toBe(false);
      } finally {
        cfg.cleanup();
      }
    },
  );

  /** Each cache file's modification time, by path under `dir`. */
  const stamps = (dir: string): Map<string, number> => {
    const out = new Map<string, number>();
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
      if (e.isFile()) out.set(join(e.parentPath, e.name), statSync(join(e.parentPath, e.name)).mtimeMs);
    return out;
  };

  it('a kv verb and a list against a server (V8 flags changed mid-run for WebAssembly): the third run compiles and writes nothing', async () => {
    const cfg = tempConfigDir('opsctl-kv-cache-');
    const cache = mkdtempSync(join(tmpdir(), 'opsctl-code-cache-'));
    const server = await startMock();
    try {
      const env = { ...trackerEnv(server, cfg.dir), OPSCTL_CODE_CACHE: cache };
      const run = async (args: string[]) => {
        const r = await execa(process.execPath, [BIN, ...args], { env, reject: false });
        expect(r.exitCode, String(r.stderr)).toBe(0);
      };
      const both = async () => {
        await run(['kv', 'get', 'foo', '--endpoints', url]);
        await run(['tracker', 'labels', 'list']);
      };
      await both();
      await both();
      const before = stamps(cache);
      // the chunks compiled after undici turned WebAssembly to Liftoff only have a cache of their own
      expect([...before.keys()].some((f) => f.includes(`${join('liftoff', '')}`))).toBe(true);
      await both();
      expect(stamps(cache)).toEqual(before);
    } finally {
      await server.close();
      rmSync(cache, { recursive: true, force: true });
      cfg.cleanup();
    }
  });
});

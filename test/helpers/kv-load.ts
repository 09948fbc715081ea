import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { KvClient } from '../../src/kv/cluster/client.js';
import { KvSession } from '../../src/kv/cluster/session.js';

/**
 * A load client of a kv (etcd) cluster as an application sees it during an upgrade: it writes and
 * reads continuously through the JSON gateway (3.2 /v3alpha, 3.3 /v3beta, learned per member from
 * /version) with failover: a request goes to the member that answered last; on an error or no
 * answer within `timeoutMs` it goes to the next member, and so on across all of them; when every
 * member failed, the whole round is retried once after `retryDelayMs`. Only then is it counted as
 * failed. Each write is a new key with a known value; reads read back an acknowledged key and
 * compare. At the end `stop()` reads back every acknowledged key (one range request) and counts the
 * acknowledged writes that are missing or wrong: lost. Used by `npm run bench` (kv-load) and by
 * test/e2e/kv-load-upgrade.test.ts.
 *
 * `clients` picks each worker's way in: `gateway` (undici straight to the JSON gateway, as above),
 * `opsctl` (opsctl's own gateway client, src/kv/cluster/client.ts: it finds each member's prefix again when
 * the member comes back on another version) or `etcdctl` (one `etcdctl put`/`get` process per request,
 * gRPC, every endpoint given: its balancer fails over; the round is retried once). Phases carry their
 * own longest write gap, so a ladder run can report one per hop.
 */
export interface LoadOptions {
  endpoints: string[];
  /** Client-certificate TLS (PEM contents). */
  tls?: { ca: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
  /** One attempt at one member (default 2000 ms). */
  timeoutMs?: number;
  /** Before the one retry of a round in which every member failed (default 200 ms). */
  retryDelayMs?: number;
  /** Concurrent workers, each alternating a write and a read (default 2). */
  workers?: number;
  /**
   * A pause after each worker's write and read (default 0: back to back, the bench's load and kv-load-ladder's).
   * A test that wants a writer beside what it checks, not the most load a cluster takes, paces it: back to back, two
   * workers kept a real 3-member cluster at about one core of CPU (14.6 CPU s in 15 s, the client's and the three
   * etcd's, 2,077 writes acknowledged), and 25 ms between rounds still wrote 14 a second at load 20 (5,432 → 2,829
   * in kv-paths-etcd's cell); 100 ms caps two workers at 20 writes a second, one every 50 ms or less.
   */
  pauseMs?: number;
  /** The first phase's name (default "before"); `phase(name)` starts the next. */
  phase?: string;
  /** One worker per entry (default two gateway workers, or `workers` of them). */
  clients?: LoadClient[];
  /** etcdctl for the etcdctl workers (API 3; default /usr/bin/etcdctl). */
  etcdctl?: string;
  /** The TLS files, for the etcdctl and opsctl workers (the gateway worker takes `tls`). */
  tlsFiles?: { ca: string; cert: string; key: string };
}

export type LoadClient = 'gateway' | 'opsctl' | 'etcdctl';

export interface PhaseStats {
  phase: string;
  sent: number;
  failedAfterRetry: number;
  /** Requests that needed another member or the retry round, and then succeeded. */
  failedOver: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** The longest time between two acknowledged writes that ended in this phase (ms). */
  longestWriteGapMs: number;
  /** Requests per client kind in this phase, and how many of them failed after the retry. */
  byClient: Record<string, { sent: number; failed: number }>;
}

export interface LoadResult {
  /** Requests (writes + reads) the application made; attempts counts every try at a member. */
  sent: number;
  attempts: number;
  writes: number;
  reads: number;
  failedAfterRetry: number;
  acknowledged: number;
  /** Acknowledged writes missing or with another value when read back at the end. */
  lost: number;
  lostKeys: string[];
  /** Reads of an acknowledged key that answered without it or with another value. */
  badReads: number;
  /** The longest time between two acknowledged writes (ms). */
  longestWriteGapMs: number;
  phases: PhaseStats[];
  lastErrors: string[];
}

export interface Load {
  phase(name: string): void;
  /** Acknowledged writes so far, in the current phase. */
  acknowledgedIn(phase?: string): number;
  stop(): Promise<LoadResult>;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString();

export function startLoad(o: LoadOptions): Load {
  const timeoutMs = o.timeoutMs ?? 2000;
  const retryDelayMs = o.retryDelayMs ?? 200;
  const dispatcher = new Agent({ connect: o.tls ? { ca: o.tls.ca, cert: o.tls.cert, key: o.tls.key } : undefined, connections: 8 });
  const prefixes = new Map<string, string>();
  const run = randomBytes(4).toString('hex');
  const keyPrefix = `load/${run}/`;
  let current = 0;
  let phase = o.phase ?? 'before';
  type Phase = {
    sent: number;
    failed: number;
    failedOver: number;
    lat: number[];
    acked: number;
    gap: number;
    byClient: Record<string, { sent: number; failed: number }>;
  };
  const phases = new Map<string, Phase>();
  const ph = (name = phase) => {
    let p = phases.get(name);
    if (!p) phases.set(name, (p = { sent: 0, failed: 0, failedOver: 0, lat: [], acked: 0, gap: 0, byClient: {} }));
    return p;
  };
  const session = new KvSession(o.tlsFiles ? { tls: { cacert: o.tlsFiles.ca, cert: o.tlsFiles.cert, key: o.tlsFiles.key } } : {});
  const opsctlClients = new Map(o.endpoints.map((e) => [e, new KvClient(e, { session, timeoutMs })]));
  const etcdctl = o.etcdctl ?? '/usr/bin/etcdctl';
  const etcdctlTls = o.tlsFiles ? ['--cacert', o.tlsFiles.ca, '--cert', o.tlsFiles.cert, '--key', o.tlsFiles.key] : [];
  const seconds = `${Math.max(1, Math.ceil(timeoutMs / 1000))}s`;
  // each etcdctl process gets the endpoints starting one further along (a retry starts at another member,
  // as a long-lived client's balancer moves off one that stopped answering)
  let etcdctlTurn = 0;
  const runEtcdctl = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const from = etcdctlTurn++ % o.endpoints.length;
      const endpoints = [...o.endpoints.slice(from), ...o.endpoints.slice(0, from)];
      execFile(
        etcdctl,
        ['--endpoints', endpoints.join(','), ...etcdctlTls, '--dial-timeout', seconds, '--command-timeout', seconds, ...args],
        { env: { PATH: '/usr/bin:/bin', ETCDCTL_API: '3' }, timeout: timeoutMs * 3 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`etcdctl ${args[0]}: ${String(stderr).trim().split('\n').pop() || err.message}`)) : resolve(String(stdout)),
      );
    });
  ph();
  const acked = new Map<string, string>();
  const ackedKeys: string[] = [];
  let seq = 0;
  let attempts = 0;
  let writes = 0;
  let reads = 0;
  let badReads = 0;
  let lastWrite: number | undefined;
  let longestGap = 0;
  const lastErrors: string[] = [];
  let running = true;

  const call = async (endpoint: string, path: string, body: unknown): Promise<any> => {
    let prefix = prefixes.get(endpoint);
    if (!prefix) {
      const v = await request(`${endpoint}/version`, { dispatcher, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
      const server = String(((await v.body.json()) as { etcdserver?: string }).etcdserver ?? '');
      prefix = server.startsWith('3.2.') ? '/v3alpha' : server.startsWith('3.3.') ? '/v3beta' : '/v3';
      prefixes.set(endpoint, prefix);
    }
    const r = await request(`${endpoint}${prefix}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}: ${text.slice(0, 160)}`);
    return JSON.parse(text);
  };

  /** etcdctl: one process per request, every endpoint given (its balancer fails over); the answer in the gateway's JSON shape. */
  const viaEtcdctl = async (path: string, body: { key: string; value?: string }): Promise<any> => {
    const key = unb64(body.key);
    if (path === '/kv/put') {
      await runEtcdctl(['put', key, unb64(body.value)]);
      return {};
    }
    const out = await runEtcdctl(['get', key, '-w', 'json']);
    return JSON.parse(out);
  };
  /** opsctl's gateway client: the member's prefix learnt and found again by KvClient itself. */
  const viaOpsctl = async (endpoint: string, path: string, body: { key: string; value?: string }): Promise<any> => {
    const c = opsctlClients.get(endpoint)!;
    const key = unb64(body.key);
    if (path === '/kv/put') {
      await c.put(key, unb64(body.value));
      return {};
    }
    const got = await c.get(key);
    return { kvs: got ? [{ key: body.key, value: b64(got.value) }] : [] };
  };

  /** One request with failover across every member, and one retry of the whole round. */
  const send = async (path: string, body: any, via: LoadClient = 'gateway'): Promise<{ ok: true; json: any; tries: number } | { ok: false }> => {
    let tries = 0;
    for (let round = 0; round < 2; round++) {
      if (round === 1) await new Promise((r) => setTimeout(r, retryDelayMs));
      if (via === 'etcdctl') {
        attempts++;
        tries++;
        try {
          return { ok: true, json: await viaEtcdctl(path, body), tries };
        } catch (err) {
          lastErrors.push(`etcdctl ${path}: ${(err as Error).message}`);
          if (lastErrors.length > 20) lastErrors.shift();
          continue;
        }
      }
      for (let k = 0; k < o.endpoints.length; k++) {
        const i = (current + k) % o.endpoints.length;
        const endpoint = o.endpoints[i]!;
        attempts++;
        tries++;
        try {
          const json = via === 'opsctl' ? await viaOpsctl(endpoint, path, body) : await call(endpoint, path, body);
          current = i;
          return { ok: true, json, tries };
        } catch (err) {
          prefixes.delete(endpoint); // the member may come back on another version
          lastErrors.push(`${via} ${endpoint}${path}: ${(err as Error).message}`);
          if (lastErrors.length > 20) lastErrors.shift();
        }
      }
    }
    return { ok: false };
  };

  const timed = async (path: string, body: unknown, via: LoadClient) => {
    const p = ph();
    p.sent++;
    const c = (p.byClient[via] ??= { sent: 0, failed: 0 });
    c.sent++;
    const t0 = performance.now();
    const r = await send(path, body, via);
    const ms = performance.now() - t0;
    if (!r.ok) {
      p.failed++;
      c.failed++;
    } else {
      p.lat.push(ms);
      if (r.tries > 1) p.failedOver++;
    }
    return r;
  };

  const worker = async (via: LoadClient) => {
    while (running) {
      const n = seq++;
      const key = `${keyPrefix}${String(n).padStart(8, '0')}`;
      const value = `v${n}-${run}`;
      writes++;
      const w = await timed('/kv/put', { key: b64(key), value: b64(value) }, via);
      if (w.ok) {
        const now = performance.now();
        if (lastWrite !== undefined) {
          longestGap = Math.max(longestGap, now - lastWrite);
          ph().gap = Math.max(ph().gap, now - lastWrite);
        }
        lastWrite = now;
        acked.set(key, value);
        ackedKeys.push(key);
        ph().acked++;
      }
      if (!running || ackedKeys.length === 0) continue;
      const k = ackedKeys[Math.floor(Math.random() * ackedKeys.length)]!;
      reads++;
      const r = await timed('/kv/range', { key: b64(k) }, via);
      if (r.ok && unb64(r.json?.kvs?.[0]?.value) !== acked.get(k)) badReads++;
      if (o.pauseMs) await new Promise((done) => setTimeout(done, o.pauseMs));
    }
  };
  const kinds: LoadClient[] = o.clients ?? Array.from({ length: o.workers ?? 2 }, () => 'gateway' as const);
  const workers = kinds.map((via) => worker(via));

  const pct = (xs: number[], q: number) => {
    if (!xs.length) return null;
    const s = [...xs].sort((a, b) => a - b);
    return Math.round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! * 10) / 10;
  };

  return {
    phase(name) {
      phase = name;
      ph();
    },
    acknowledgedIn: (name = phase) => ph(name).acked,
    async stop() {
      running = false;
      await Promise.all(workers);
      // Every acknowledged write, read back in one range request (with failover and the retry).
      const end = keyPrefix.slice(0, -1) + String.fromCharCode(keyPrefix.charCodeAt(keyPrefix.length - 1) + 1);
      const all = await send('/kv/range', { key: b64(keyPrefix), range_end: b64(end) });
      await dispatcher.close();
      await session.close();
      if (!all.ok) throw new Error(`the read-back of the acknowledged writes failed on every member: ${lastErrors.slice(-3).join('; ')}`);
      const stored = new Map<string, string>(((all.json.kvs ?? []) as Array<{ key: string; value?: string }>).map((kv) => [unb64(kv.key), unb64(kv.value)]));
      const lostKeys = ackedKeys.filter((k) => stored.get(k) !== acked.get(k));
      const list = [...phases.entries()].map(([name, p]) => ({
        phase: name,
        sent: p.sent,
        failedAfterRetry: p.failed,
        failedOver: p.failedOver,
        p50Ms: pct(p.lat, 0.5),
        p99Ms: pct(p.lat, 0.99),
        maxMs: pct(p.lat, 1),
        longestWriteGapMs: Math.round(p.gap),
        byClient: p.byClient,
      }));
      return {
        sent: list.reduce((n, p) => n + p.sent, 0),
        attempts,
        writes,
        reads,
        failedAfterRetry: list.reduce((n, p) => n + p.failedAfterRetry, 0),
        acknowledged: ackedKeys.length,
        lost: lostKeys.length,
        lostKeys: lostKeys.slice(0, 20),
        badReads,
        longestWriteGapMs: Math.round(longestGap),
        phases: list,
        lastErrors,
      };
    },
  };
}

/**
 * Names the load's phase after the ladder hop under way: `3.2→3.3` from the start, then the next hop
 * once every member that answers (at least a majority) reports the hop's target as its cluster version
 * (/version, polled every 200 ms). `stop()` ends the polling; the caller then starts its own phase.
 */
export function followLadder(load: Load, o: { endpoints: string[]; from: string; to: string[]; tls?: LoadOptions['tls'] }): { stop(): Promise<void> } {
  const dispatcher = new Agent({ connect: o.tls ? { ca: o.tls.ca, cert: o.tls.cert, key: o.tls.key } : undefined });
  const hops = o.to.map((t, i) => ({ name: `${i === 0 ? o.from : o.to[i - 1]}→${t}`, to: t }));
  let at = 0;
  load.phase(hops[0]!.name);
  let running = true;
  const minorOf = (v: string) => v.split('.').slice(0, 2).join('.');
  const newer = (a: string, b: string) => Number(a.split('.')[1]) >= Number(b.split('.')[1]);
  const poll = (async () => {
    while (running && at < hops.length - 1) {
      const vs = await Promise.all(
        o.endpoints.map(async (e) => {
          try {
            const r = await request(`${e}/version`, { dispatcher, headersTimeout: 1000, bodyTimeout: 1000 });
            return String(((await r.body.json()) as { etcdcluster?: string }).etcdcluster ?? '');
          } catch {
            return undefined;
          }
        }),
      );
      const answered = vs.filter((v): v is string => Boolean(v));
      if (answered.length * 2 > o.endpoints.length && answered.every((v) => newer(minorOf(v), hops[at]!.to))) load.phase(hops[++at]!.name);
      else await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      running = false;
      await poll;
      await dispatcher.close();
    },
  };
}

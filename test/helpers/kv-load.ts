import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';

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
  /** The first phase's name (default "before"); `phase(name)` starts the next. */
  phase?: string;
}

export interface PhaseStats {
  phase: string;
  sent: number;
  failedAfterRetry: number;
  /** Requests that needed another member or the retry round, and then succeeded. */
  failedOver: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
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
  const phases = new Map<string, { sent: number; failed: number; failedOver: number; lat: number[]; acked: number }>();
  const ph = (name = phase) => {
    let p = phases.get(name);
    if (!p) phases.set(name, (p = { sent: 0, failed: 0, failedOver: 0, lat: [], acked: 0 }));
    return p;
  };
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

  /** One request with failover across every member, and one retry of the whole round. */
  const send = async (path: string, body: unknown): Promise<{ ok: true; json: any; tries: number } | { ok: false }> => {
    let tries = 0;
    for (let round = 0; round < 2; round++) {
      if (round === 1) await new Promise((r) => setTimeout(r, retryDelayMs));
      for (let k = 0; k < o.endpoints.length; k++) {
        const i = (current + k) % o.endpoints.length;
        const endpoint = o.endpoints[i]!;
        attempts++;
        tries++;
        try {
          const json = await call(endpoint, path, body);
          current = i;
          return { ok: true, json, tries };
        } catch (err) {
          prefixes.delete(endpoint); // the member may come back on another version
          lastErrors.push(`${endpoint}${path}: ${(err as Error).message}`);
          if (lastErrors.length > 20) lastErrors.shift();
        }
      }
    }
    return { ok: false };
  };

  const timed = async (path: string, body: unknown) => {
    const p = ph();
    p.sent++;
    const t0 = performance.now();
    const r = await send(path, body);
    const ms = performance.now() - t0;
    if (!r.ok) p.failed++;
    else {
      p.lat.push(ms);
      if (r.tries > 1) p.failedOver++;
    }
    return r;
  };

  const worker = async () => {
    while (running) {
      const n = seq++;
      const key = `${keyPrefix}${String(n).padStart(8, '0')}`;
      const value = `v${n}-${run}`;
      writes++;
      const w = await timed('/kv/put', { key: b64(key), value: b64(value) });
      if (w.ok) {
        const now = performance.now();
        if (lastWrite !== undefined) longestGap = Math.max(longestGap, now - lastWrite);
        lastWrite = now;
        acked.set(key, value);
        ackedKeys.push(key);
        ph().acked++;
      }
      if (!running || ackedKeys.length === 0) continue;
      const k = ackedKeys[Math.floor(Math.random() * ackedKeys.length)]!;
      reads++;
      const r = await timed('/kv/range', { key: b64(k) });
      if (r.ok && unb64(r.json?.kvs?.[0]?.value) !== acked.get(k)) badReads++;
    }
  };
  const workers = Array.from({ length: o.workers ?? 2 }, () => worker());

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

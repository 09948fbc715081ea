/**
 * The simulated kv member: a small, honest stand-in for an etcd 3.2 … 3.7 server process, used by
 * `opsctl kv sandbox` when no real binaries are given. Not Raft: the leader is the reachable member
 * every member agrees on, writes go to the leader and are acknowledged once a majority stored them,
 * followers copy the leader's state when they fall behind. What it reproduces is what an upgrade
 * sees: /health bodies per version (503 without quorum), /version (kvserver/kvcluster; the cluster
 * version is the lowest of the members, raised only when all are reachable, never lowered), the
 * gateway (3.2 /v3alpha; 3.3 /v3beta and /v3alpha → /v3beta redirects; 3.4+ /v3 and /v3beta), the
 * shapes of 3.4 to 3.7 (/health with a reason from 3.5, /version with storage from 3.6, the v2 API off
 * from 3.4 and gone in 3.6, a log-output string refused from 3.4, --feature-gates from 3.6, the
 * --experimental-* flags 3.7 removed refused), --max-request-bytes, a
 * snapshot stream with a SHA-256 trailer, leader changes, the seed's log lines, and 3.3 refusing a
 * numeric auto-compaction-retention in its config file.
 *
 * A member knows its leader, and answers /health "true", only once the leader itself reached it:
 * a heartbeat (the leader's ping every --heartbeat-interval names the leader) or an append, as in
 * etcd/raft, where a (re)started follower learns the leader from the leader's next message, then
 * publishes its attributes through it ("published {Name:… ClientURLs:[…]} to cluster …"), and
 * where /health needs a leader and a proposal committed through it. Its own look at the peers
 * (which one claims to lead) is not enough. So a restarted member turns healthy up to one heartbeat
 * after it listens, not at once.
 *
 * The simulated cluster's conditions (conditions.ts: a member never healthy on a version, a corrupt
 * snapshot, an alarm, muted heartbeats, …) are asked on each request and each heartbeat; the product
 * sets none, a test entry (packages/etcd-sim/testing/) sets them.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { dict, emptyDict, own } from '@opsctl/shared/lookup.js';
import { compareMinor as cmp, gatewayPrefixFor, minor } from '@opsctl/shared/etcd-versions.js';
import { asObject, textOf, type JsonObject } from '@opsctl/shared/json.js';
import { SIM_RELEASES } from './releases.js';
import { readArgs } from './args.js';
import { rangeOf } from './range.js';
import { badGates, refusedFlag } from './flags.js';
import { conditions as fault } from './conditions.js';
import { isAppend, isPeerDelete, isPeerPut, isPing, readState, type Append, type Kv, type PeerDelete, type Persisted, type PingInfo } from './messages.js';
import { MemberStore } from './store.js';

/** The release each minor stands for: the real binaries the tests run (3.4 is Debian's etcd-server). */
const VERSIONS = SIM_RELEASES;

interface Peer {
  name: string;
  peerUrl: string;
  reachable: boolean;
  /** When a ping last succeeded (ms, monotonic). */
  lastSeen: number;
  info?: PingInfo;
  seenHigher?: boolean;
}

// The flags, and the settings of the YAML file --config-file names (args.ts).
const args = readArgs();
const { name, dataDir, clientUrl, peerUrl, initialCluster, token, heartbeatMs, electionMs, maxRequestBytes, configFile, retention, settings } = args;
// --kv-version 3.5 runs that minor's release; --kv-version 3.5.21 that very patch release.
const minorVersion = minor(args.minorVersion) ?? args.minorVersion;
const serverVersion = /^\d+\.\d+\.\d+$/.test(args.minorVersion) ? args.minorVersion : (own(VERSIONS, minorVersion) ?? `${minorVersion}.0`);
/** 3.4 and later (the shapes and the rules that changed with it). */
const from34 = cmp(minorVersion, '3.4') >= 0;
// As etcd: a peer that stops answering is given up (and a leader without a quorum steps down) only
// after an election timeout, 10 heartbeats by default. A member that is merely slow for a moment
// (a GC pause, a stalled disk, a busy CPU) must not cost the cluster its leader. A refused
// connection is different: nothing listens there any more, the process is gone.
const pingTimeoutMs = Math.max(heartbeatMs * 2, Math.floor(electionMs / 2));
// A write waits for a quorum this long (etcd: the request timeout) before it fails.
const commitTimeoutMs = Math.max(2000, electionMs * 2);
const clusterId = idOf(`cluster:${token}`);
const memberId = idOf(`${token}:${name}`);
const prefix = gatewayPrefixFor(serverVersion) ?? '/v3beta';
/** 3.4 and later serve /v3beta beside /v3 (measured on 3.4.23, 3.5.35 and 3.6.16). */
const alsoServed = from34 ? ['/v3beta'] : [];

function idOf(s: string): string {
  // uint64 ids above 2^53, as real etcd's are: a test of precision for every client.
  return (BigInt(`0x${createHash('sha256').update(s).digest('hex').slice(0, 16)}`) | (1n << 63n)).toString();
}

function log(level: 'I' | 'W' | 'E' | 'N', msg: string): void {
  const ts = new Date().toISOString().replace('T', ' ').replace('Z', '');
  process.stderr.write(`${ts} ${level} | kvserver: ${name}: ${msg}\n`);
}

function fail(msg: string): never {
  log('E', msg);
  process.exit(1);
}

// ---- config file: 3.3 made auto-compaction-retention a string --------------------------------
// (retention is undefined without a config file or the setting in it)
if (minorVersion !== '3.2' && typeof retention === 'number') {
  fail(
    `error loading config file "${configFile}": auto-compaction-retention must be a string in ${minorVersion} (write "${retention}" or "${retention}h"), got the number ${retention}`,
  );
}
// 3.2 reads it into an int: a string there stops 3.2.32 at start just the same.
if (minorVersion === '3.2' && typeof retention === 'string') {
  fail(
    `error verifying flags, error unmarshaling JSON: json: cannot unmarshal string into Go struct field configYAML.auto-compaction-retention of type int (config file "${configFile}")`,
  );
}

// 3.4 made log-output a list (log-outputs); a string there stops 3.4.23 at start (measured).
if (from34 && typeof settings['log-output'] === 'string') {
  fail(
    `error verifying flags, error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field configYAML.log-output of type []string (config file "${configFile}")`,
  );
}
// 3.6's --feature-gates and 3.7's removed --experimental-* flags, refused as the real binaries do (flags.ts):
// on the command line at the first one, exit 2; a config file's feature-gates are checked from 3.6 on.
const refusedWord = refusedFlag(minorVersion, process.argv.slice(2));
if (refusedWord) {
  process.stderr.write(`${refusedWord}\nUsage:\n\n  etcd [flags]\n    Start an etcd server.\n`);
  process.exit(2);
}
const fileGates = settings['feature-gates'];
if (cmp(minorVersion, '3.6') >= 0 && fileGates !== undefined) {
  if (typeof fileGates !== 'string')
    fail(
      `error verifying flags, json: cannot unmarshal ${typeof fileGates} into Go struct field configJSON.feature-gates of type string (config file "${configFile}")`,
    );
  const why = badGates(minorVersion, fileGates);
  if (why) fail(`error verifying flags, ${why} (config file "${configFile}")`);
}
/** The v2 API: on by default before 3.4, off from 3.4 (enable-v2: true turns it on up to 3.5), gone in 3.6. */
const v2On = cmp(minorVersion, '3.6') < 0 && (!from34 || settings['enable-v2'] === true);

// ---- state ---------------------------------------------------------------------------------
/** A peer from one `name=peerURL` of --initial-cluster, split at '='; one without a peer URL stops the member. */
function peerOf([n, u]: string[]): Peer {
  if (n === undefined || u === undefined) fail(`error setting up initial cluster: "${n}" has no peer URL (--initial-cluster ${initialCluster})`);
  return { name: n, peerUrl: u.replace(/\/$/, ''), reachable: true, lastSeen: performance.now() };
}

mkdirSync(join(dataDir, 'member'), { recursive: true });
// member/kv.json and the log of the changes since (store.ts)
const store = new MemberStore(join(dataDir, 'member'));
const peers: Peer[] = initialCluster
  .split(',')
  .map((e) => e.split('='))
  .filter(([n]) => n !== name)
  .map(peerOf);
const clusterSize = peers.length + 1;
const quorum = Math.floor(clusterSize / 2) + 1;

const loaded = store.load();
if (loaded.skipped) log('W', `member/kv.log: ${loaded.skipped} (${loaded.replayed} changes replayed)`);
let st: Persisted = loaded.state ?? { revision: 1, kvs: emptyDict(), clusterVersion: '', clients: emptyDict() };
if (st.clusterVersion && cmp(st.clusterVersion, minorVersion) > 0) {
  fail(`cluster cannot be downgraded (current version: ${serverVersion} is lower than determined cluster version: ${st.clusterVersion})`);
}
let leader = '';
let term = 0;
/** Defragmented since it started: the free pages of its conditions are gone from its db size. */
let defragmented = false;
/** The leader whose heartbeat or append last reached this process (it learns the leader from it). */
let heardFrom = '';
let published = false;
const ownClientUrl = clientUrl.href.replace(/\/$/, '');
st.clients[name] = ownClientUrl;

/**
 * Stores the change just made to `st`, before anyone is told of it: a put or delete names the keys it
 * touched (one line of member/kv.log); any other change writes the whole state (store.ts).
 */
function persist(keys?: readonly string[]): void {
  store.save(st, keys);
}
persist();

/**
 * The v2 store as etcd keeps it on disk, its newest snapshot file (member/snap/TERM-INDEX.snap): the
 * size of this member's v2 key tree (an empty one, or the v2 data of its conditions), so whoever sizes
 * a member's v2 data from its data dir (kv upgrade --settle auto) reads it as it would read etcd's.
 */
let v2SnapBytes = -1;
function writeV2Snapshot(): void {
  const bytes = Math.max(EMPTY_V2_TREE.length, fault().v2Bytes ?? 0);
  if (bytes === v2SnapBytes) return;
  const dir = join(dataDir, 'member', 'snap');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '0000000000000001-0000000000000001.snap'), bytes > EMPTY_V2_TREE.length ? Buffer.alloc(bytes, 0x20) : EMPTY_V2_TREE);
  v2SnapBytes = bytes;
}
const EMPTY_V2_TREE = Buffer.from('{"action":"get","node":{"dir":true}}');
writeV2Snapshot();

/** A list with a first item, typed so: its `[0]` (also after a sort) is never undefined. */
function nonEmpty<T>(first: T, ...rest: T[]): [T, ...T[]] {
  return [first, ...rest];
}

const reachableCount = () => 1 + peers.filter((p) => p.reachable).length;
const hasQuorum = () => reachableCount() >= quorum;
const ping = (): PingInfo => ({
  name,
  id: memberId,
  version: minorVersion,
  revision: st.revision,
  leader,
  term,
  clusterVersion: st.clusterVersion,
  clientUrl: st.clients[name] ?? ownClientUrl, // set at start; a sync from the leader keeps the key
  downgrade: st.downgrade ?? '',
});

/**
 * etcd 3.6's downgrade API (POST /v3/maintenance/downgrade): VALIDATE and ENABLE take the previous
 * minor of the cluster version only; ENABLE (on the leader) lowers the cluster version to it at once,
 * and the leader ends the downgrade once every member runs it; CANCEL ends it. Answers `version`.
 */
function downgradeAction(action: unknown, version: string): { ok: true; version: string } | { ok: false; code: number; message: string } {
  const act = action === 1 || action === 'ENABLE' ? 'ENABLE' : action === 2 || action === 'CANCEL' ? 'CANCEL' : 'VALIDATE';
  const target = /^(\d+\.\d+)/.exec(version)?.[1];
  if (act === 'CANCEL') {
    if (!st.downgrade) return { ok: false, code: 9, message: 'etcdserver: no inflight downgrade job' };
    log('N', `the cluster downgrade to ${st.downgrade} was cancelled`);
    delete st.downgrade;
    persist();
    return { ok: true, version: st.clusterVersion };
  }
  const [maj, min] = st.clusterVersion.split('.').map(Number);
  const previous = maj !== undefined && min !== undefined ? `${maj}.${min - 1}` : '';
  if (!target || target !== previous) return { ok: false, code: 3, message: 'etcdserver: invalid downgrade target version' };
  if (act === 'VALIDATE') return { ok: true, version: st.clusterVersion };
  if (st.downgrade) return { ok: false, code: 9, message: 'etcdserver: cluster has a downgrade job in progress' };
  log('N', `the cluster downgrade to ${target} is enabled; the cluster version goes from ${st.clusterVersion} to ${target}`);
  const was = st.clusterVersion;
  st.downgrade = target;
  st.clusterVersion = target;
  persist();
  return { ok: true, version: was };
}

// ---- HTTP plumbing ---------------------------------------------------------------------------
// Peer calls of the simulated member (a stand-in server process, not opsctl's client: that is
// core/http.ts). node:http keeps its start-up small: loading undici here cost every simulated member
// ~0.2 s of start-up under load, which an upgrade of the sandbox waits for. One deadline for the
// whole exchange; a GET on a kept-alive socket the peer closed is sent again once.
const peerAgent = new Agent({ keepAlive: true, maxSockets: 16 });
function peerOnce(url: string, body: string | undefined, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: body === undefined ? 'GET' : 'POST',
        agent: peerAgent,
        headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(t);
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    const t = setTimeout(() => req.destroy(Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(t);
      reject(err);
    });
    req.end(body);
  });
}
async function peerCall(url: string, path: string, body?: unknown, timeoutMs = pingTimeoutMs): Promise<unknown> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const res = await peerOnce(`${url}${path}`, text, timeoutMs).catch((err: NodeJS.ErrnoException) => {
    if (text !== undefined || (err.code !== 'ECONNRESET' && err.code !== 'EPIPE')) throw err;
    return peerOnce(`${url}${path}`, text, timeoutMs);
  });
  if (res.status !== 200) throw Object.assign(new Error(res.text), { status: res.status, body: res.text });
  return JSON.parse(res.text) as unknown;
}

function readBody(req: IncomingMessage, limit = Infinity): Promise<{ text: string; size: number; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
    });
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), size, tooLarge: size > limit }));
    req.on('error', reject);
  });
}

/** A request body's JSON (an empty body is `{}`); undefined when it does not parse. */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text || '{}') as unknown;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown, raw = false): void {
  const text = raw ? String(body) : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const grpcError = (res: ServerResponse, status: number, code: number, message: string) => send(res, status, { error: message, message, code });

const header = () => ({ cluster_id: clusterId, member_id: memberId, revision: String(st.revision), raft_term: String(term) });

// ---- writes: the leader applies and replicates to a majority -----------------------------------
let writeChain: Promise<unknown> = Promise.resolve();
/** A put made here on the leader: its revision, and the key as it was before (etcd's prev_kv). */
async function leaderPut(key: string, value: string): Promise<{ revision: number; prev_kv?: JsonObject }> {
  let before: JsonObject | undefined;
  const w = await leaderWrite((rev) => {
    const prev = own(st.kvs, key);
    before = prev ? rangeOf(st.kvs, { key }).kvs[0] : undefined;
    st.kvs[key] = { value, create_revision: prev?.create_revision ?? rev, mod_revision: rev, version: (prev?.version ?? 0) + 1 };
    return { key, kv: st.kvs[key] };
  });
  return { revision: w.revision, ...(before ? { prev_kv: before } : {}) };
}

/** A delete of a key or range made here on the leader: the keys it removed, as they were (none: no new revision, as etcd). */
async function leaderDelete(d: PeerDelete): Promise<{ revision: number; deleted: number; prev_kvs: JsonObject[] }> {
  let prev: JsonObject[] = [];
  const w = await leaderWrite(() => {
    prev = rangeOf(st.kvs, { key: d.key, ...(d.range_end ? { range_end: d.range_end } : {}) }).kvs;
    if (!prev.length) return undefined;
    const deleted = prev.map((x) => String(x.key));
    for (const k of deleted) delete st.kvs[k];
    return { deleted };
  });
  return { revision: w.revision, deleted: prev.length, prev_kvs: prev };
}

type Change = { key: string; kv: Kv } | { deleted: string[] };
const keysOf = (c: Change): string[] => ('key' in c ? [c.key] : c.deleted);

/** One write on the leader: `apply` changes the state at the next revision (undefined: nothing changed), then a majority stores it. */
function leaderWrite(apply: (rev: number) => Change | undefined): Promise<{ revision: number }> {
  const run = async () => {
    if (leader !== name || !hasQuorum()) throw Object.assign(new Error('kvserver: no leader'), { code: 14 });
    const rev = st.revision + 1;
    const change = apply(rev);
    if (!change) return { revision: st.revision };
    st.revision = rev;
    persist(keysOf(change));
    // Committed once a majority (the leader included) stored it, as Raft does: a slow follower does
    // not hold the write up; it gets the entry when its append lands, or catches up on its next tick.
    const entry: Append = { leader: name, term, revision: rev, ...change };
    const targets = peers.filter((p) => p.reachable);
    const committed = await new Promise<boolean>((resolve) => {
      let acks = 1;
      let failed = 0;
      if (acks >= quorum) return resolve(true);
      for (const p of targets) {
        peerCall(p.peerUrl, '/peer/append', entry, commitTimeoutMs).then(
          () => {
            if (++acks >= quorum) resolve(true);
          },
          () => {
            if (targets.length - ++failed + 1 < quorum) resolve(false);
          },
        );
      }
      if (targets.length + 1 < quorum) resolve(false);
    });
    if (!committed) throw Object.assign(new Error('kvserver: request timed out'), { code: 14 });
    return { revision: rev };
  };
  const p = writeChain.then(run, run);
  writeChain = p.catch(() => undefined);
  return p;
}

async function syncFromLeader(): Promise<void> {
  const lp = peers.find((p) => p.name === leader);
  if (!lp) return;
  const full = readState(await peerCall(lp.peerUrl, '/peer/state', undefined, 2000));
  st = { ...full, clients: dict({ ...st.clients, ...full.clients }) };
  persist();
}

/** The leader as this member knows it: itself, or the one it agrees on and has heard from. */
function knownLeader(): string {
  return leader !== '' && (leader === name || heardFrom === leader) ? leader : '';
}

/** A heartbeat or an append from a member that leads: this member now knows the leader. */
function heard(from: string): void {
  if (!from || from === name) return;
  heardFrom = from;
  notePublished();
}

/** The seed's line, once per process: the member published itself through the leader it knows. */
function notePublished(): void {
  if (published || !knownLeader()) return;
  published = true;
  log('I', `published {Name:${name} ClientURLs:[${st.clients[name]}]} to cluster ${clusterId}`);
}

// ---- the client server -----------------------------------------------------------------------
function health(res: ServerResponse): void {
  const ok = knownLeader() !== '' && hasQuorum() && fault().neverHealthyOn !== minorVersion;
  const v = ok ? 'true' : 'false';
  // 3.2 wrote `{"health": "true"}`; 3.3 and 3.4.23 `{"health":"true"}`; 3.5 and 3.6 add a reason
  // (`{"health":"true","reason":""}`; `"RAFT NO LEADER"` without a leader).
  const reason = ok ? '' : knownLeader() === '' ? 'RAFT NO LEADER' : 'NOT HEALTHY';
  const body = minorVersion === '3.2' ? `{"health": "${v}"}` : cmp(minorVersion, '3.5') >= 0 ? `{"health":"${v}","reason":"${reason}"}` : `{"health":"${v}"}`;
  send(res, ok ? 200 : 503, body, true);
}

/**
 * The v2 key tree (GET /v2/keys/?recursive=true): an empty store (etcd's "Key not found", 404 with
 * errorCode 100), or the v2Bytes of its conditions; a plain 404 where the v2 API is off (3.4 and 3.5
 * by default) or gone (3.6).
 */
function v2Keys(res: ServerResponse): void {
  if (!v2On) return send(res, 404, '404 page not found\n', true);
  const bytes = fault().v2Bytes;
  if (!bytes) return send(res, 404, { errorCode: 100, message: 'Key not found', cause: '/', index: st.revision });
  const value = 'x'.repeat(Math.max(0, bytes - 120));
  return send(res, 200, { action: 'get', node: { dir: true, nodes: [{ key: '/v2data', value, modifiedIndex: 1, createdIndex: 1 }] } });
}

/** A client's write: made here on the leader, else sent on to the leader (then caught up with it). */
async function clientPut(res: ServerResponse, key: string, value: string, withPrev: boolean): Promise<void> {
  try {
    let r: { revision: number; prev_kv?: JsonObject };
    if (leader === name) r = await leaderPut(key, value);
    else {
      const lp = peers.find((p) => p.name === leader && p.reachable);
      if (!lp || !hasQuorum()) return grpcError(res, 503, 14, 'kvserver: no leader');
      r = asObject(await peerCall(lp.peerUrl, '/peer/put', { key, value }, 3000)) as unknown as typeof r;
      if (st.revision < Number(lp.info?.revision ?? 0)) await syncFromLeader().catch(() => undefined);
    }
    // the gateway sends the key as it was only when asked (prev_kv), as etcd's
    return send(res, 200, { header: header(), ...(withPrev && r.prev_kv ? { prev_kv: r.prev_kv } : {}) });
  } catch (err) {
    return grpcError(res, 503, 14, (err as Error).message.startsWith('kvserver') ? (err as Error).message : 'kvserver: request timed out');
  }
}

/** A client's delete: made here on the leader, else sent on to the leader (then caught up with it). */
async function clientDelete(res: ServerResponse, d: PeerDelete, withPrev: boolean): Promise<void> {
  try {
    let r: { revision: number; deleted: number; prev_kvs: JsonObject[] };
    if (leader === name) r = await leaderDelete(d);
    else {
      const lp = peers.find((p) => p.name === leader && p.reachable);
      if (!lp || !hasQuorum()) return grpcError(res, 503, 14, 'kvserver: no leader');
      r = asObject(await peerCall(lp.peerUrl, '/peer/delete', d, 3000)) as unknown as typeof r;
      if (st.revision < Number(lp.info?.revision ?? 0)) await syncFromLeader().catch(() => undefined);
    }
    // the gateway leaves out a zero count and the previous keys unless asked, as etcd's
    return send(res, 200, {
      header: header(),
      ...(r.deleted ? { deleted: String(r.deleted) } : {}),
      ...(withPrev && r.deleted ? { prev_kvs: r.prev_kvs } : {}),
    });
  } catch (err) {
    return grpcError(res, 503, 14, (err as Error).message.startsWith('kvserver') ? (err as Error).message : 'kvserver: request timed out');
  }
}

async function gateway(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const body = await readBody(req, maxRequestBytes);
  if (body.tooLarge) return grpcError(res, 400, 3, 'kvserver: request is too large');
  const parsed = jsonOf(body.text);
  if (parsed === undefined) return grpcError(res, 400, 3, 'invalid JSON body');
  const input = asObject(parsed);
  if (fault().authEnabled && (path === '/kv/put' || path === '/kv/range' || path === '/kv/deleterange') && !req.headers.authorization) {
    return grpcError(res, 400, 3, 'etcdserver: user name is empty');
  }
  switch (path) {
    case '/kv/put': {
      const key = input.key;
      if (typeof key !== 'string' || !key) return grpcError(res, 400, 3, 'kvserver: key is not provided');
      return clientPut(res, key, textOf(input.value) ?? '', input.prev_kv === true);
    }
    case '/kv/deleterange': {
      if (typeof input.key !== 'string' || !input.key) return grpcError(res, 400, 3, 'etcdserver: key is not provided');
      return clientDelete(res, { key: input.key, ...(typeof input.range_end === 'string' ? { range_end: input.range_end } : {}) }, input.prev_kv === true);
    }
    case '/kv/range': {
      // A linearizable read (etcd's default) needs the leader and a quorum, as /health does here.
      if (input.serializable !== true && !(knownLeader() !== '' && hasQuorum() && fault().neverHealthyOn !== minorVersion)) {
        return grpcError(res, 503, 14, knownLeader() === '' ? 'etcdserver: no leader' : 'etcdserver: request timed out');
      }
      return send(res, 200, { header: header(), ...rangeOf(st.kvs, input) });
    }
    case '/maintenance/status': {
      const known = knownLeader();
      const leaderId = known === name ? memberId : (peers.find((p) => p.name === known)?.info?.id ?? '0');
      return send(res, 200, {
        header: header(),
        version: serverVersion,
        dbSize: String(Buffer.byteLength(JSON.stringify(st.kvs)) + (defragmented ? 0 : (fault().freeBytes ?? 0))),
        leader: leaderId,
        raftIndex: String(st.revision),
        raftTerm: String(term),
        // 3.4+ lists the alarms raised among its errors, as its alarm list gives them (3.7 without the last space)
        ...(from34 && fault().alarm ? { errors: [`memberID:${memberId} alarm:${fault().alarm}${cmp(minorVersion, '3.7') >= 0 ? '' : ' '}`] } : {}),
        // 3.6 adds the storage version and the downgrade in progress
        ...(cmp(minorVersion, '3.6') >= 0
          ? {
              storageVersion: st.clusterVersion ? `${st.clusterVersion}.0` : '',
              downgradeInfo: st.downgrade ? { enabled: true, targetVersion: `${st.downgrade}.0` } : {},
            }
          : {}),
      });
    }
    case '/maintenance/downgrade': {
      if (cmp(minorVersion, '3.6') < 0) return grpcError(res, 404, 5, `unknown gateway path ${path}`);
      const version = textOf(input.version) ?? '';
      let r: ReturnType<typeof downgradeAction>;
      if (leader === name) r = downgradeAction(input.action, version);
      else {
        const lp = peers.find((x) => x.name === knownLeader());
        if (!lp) return grpcError(res, 503, 14, 'etcdserver: no leader');
        r = (await peerCall(lp.peerUrl, '/peer/downgrade', { action: input.action, version }).catch((err: Error & { body?: string }) => {
          const e = asObject(jsonOf(err.body ?? '') ?? {});
          return { ok: false, code: Number(e.code ?? 14), message: textOf(e.message) ?? err.message };
        })) as ReturnType<typeof downgradeAction>;
      }
      if (!r.ok) return grpcError(res, r.code === 3 ? 400 : 500, r.code, r.message);
      return send(res, 200, { header: header(), version: r.version });
    }
    case '/maintenance/hashkv': {
      // HashKV (3.3+): a hash of the keys and values at a revision; 3.2 has no such method.
      if (cmp(minorVersion, '3.3') < 0) return grpcError(res, 501, 12, 'unknown method HashKV');
      const rev = Number(textOf(input.revision) ?? '0') || st.revision;
      if (rev > st.revision) return grpcError(res, 400, 11, 'etcdserver: mvcc: required revision is a future revision');
      const h = createHash('sha256');
      for (const [k, v] of Object.entries(st.kvs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (v.mod_revision <= rev) h.update(`${k}\0${v.value}\0${v.mod_revision}\0`);
      }
      if (fault().divergent || fault().divergentOn === minorVersion) h.update('diverged');
      return send(res, 200, { header: header(), hash: h.digest().readUInt32BE(0), compact_revision: '-1' });
    }
    case '/maintenance/defragment': {
      defragmented = true;
      return send(res, 200, {});
    }
    case '/maintenance/alarm': {
      const a = fault().alarm;
      return send(res, 200, { header: header(), ...(a ? { alarms: [{ memberID: memberId, alarm: a }] } : {}) });
    }
    case '/cluster/member/list': {
      const members = [
        { ID: memberId, name, peerURLs: [peerUrl.href.replace(/\/$/, '')], clientURLs: [st.clients[name] ?? ownClientUrl] },
        ...peers.map((p) => ({
          ID: p.info?.id ?? idOf(`${token}:${p.name}`),
          name: p.name,
          peerURLs: [p.peerUrl],
          clientURLs: st.clients[p.name] ? [st.clients[p.name]] : [],
        })),
      ];
      return send(res, 200, { header: header(), members });
    }
    case '/maintenance/snapshot': {
      // The file: the state as JSON, padded to a 512-byte boundary, then its SHA-256 (as etcd's db + trailer).
      const payload = Buffer.from(JSON.stringify({ kvsnapshot: 1, member: name, revision: st.revision, clusterVersion: st.clusterVersion, kvs: st.kvs }));
      const padded = Buffer.concat([payload, Buffer.alloc((512 - (payload.length % 512)) % 512, 0x20)]);
      const sum = createHash('sha256').update(padded).digest();
      if (fault().corruptSnapshot) padded.writeUInt8(padded.readUInt8(0) ^ 0xff, 0);
      const file = Buffer.concat([padded, sum]);
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < file.length; i += 32 * 1024) {
        res.write(
          `${JSON.stringify({ result: { blob: file.subarray(i, i + 32 * 1024).toString('base64'), remaining_bytes: String(Math.max(0, file.length - i - 32 * 1024)) } })}\n`,
        );
      }
      return void res.end();
    }
    default:
      return grpcError(res, 404, 5, `unknown gateway path ${path}`);
  }
}

/** GET /version, on the client and the peer port alike (as etcd). */
function versionBody(): Record<string, string> {
  const cluster = st.clusterVersion ? `${st.clusterVersion}.0` : 'not_decided';
  // 3.6 adds the storage version (etcd writes it once the cluster version is decided).
  return {
    kvserver: serverVersion,
    kvcluster: cluster,
    ...(cmp(minorVersion, '3.6') >= 0 ? { storage: cluster === 'not_decided' ? '' : cluster } : {}),
  };
}

/** GET /members on the peer port, as etcd 3.2 to 3.7 answer it: a bare array, uint64 ids as JSON numbers. */
function peerMembersText(): string {
  const one = (id: string, n: string, peer: string, client: string | undefined) =>
    `{"id":${id},"peerURLs":${JSON.stringify([peer])},"name":${JSON.stringify(n)},"clientURLs":${JSON.stringify(client ? [client] : [])}}`;
  const all = [
    one(memberId, name, peerUrl.href.replace(/\/$/, ''), st.clients[name] ?? ownClientUrl),
    ...peers.map((x) => one(x.info?.id ?? idOf(`${token}:${x.name}`), x.name, x.peerUrl, st.clients[x.name])),
  ];
  return `[${all.join(',')}]\n`;
}

const clientServer = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname;
  const done = (err: unknown) => {
    if (!res.headersSent) grpcError(res, 500, 13, (err as Error).message);
  };
  if (p === '/health') return health(res);
  if (p === '/version') return send(res, 200, versionBody());
  if (p === '/v2/keys/' || p === '/v2/keys') return v2Keys(res);
  if (minorVersion === '3.3' && p.startsWith('/v3alpha/')) {
    res.writeHead(308, { location: `/v3beta/${p.slice('/v3alpha/'.length)}${url.search}` });
    return void res.end();
  }
  if (p.startsWith(`${prefix}/`) && req.method === 'POST') return void gateway(req, res, p.slice(prefix.length)).catch(done);
  const other = alsoServed.find((x) => p.startsWith(`${x}/`));
  if (other && req.method === 'POST') return void gateway(req, res, p.slice(other.length)).catch(done);
  return send(res, 404, `404 page not found\n`, true);
});

// ---- the peer server -----------------------------------------------------------------------
/** A leader's append: it names the leader; the entry is stored when it is the next one, else this member catches up. */
async function applyAppend(a: Append): Promise<void> {
  if (a.term >= term) {
    term = a.term;
    leader = a.leader;
    heard(a.leader);
  }
  if (a.revision === st.revision + 1) {
    if ('deleted' in a) for (const k of a.deleted) delete st.kvs[k];
    else st.kvs[a.key] = a.kv;
    st.revision = a.revision;
    persist(keysOf(a));
  } else if (a.revision > st.revision) await syncFromLeader();
}

const peerServer = createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  const p = u.pathname;
  void (async () => {
    if (p === '/peer/ping') {
      // A leader's ping is its heartbeat: it names the leader.
      const from = u.searchParams.get('leader');
      if (from) heard(from);
      return send(res, 200, ping());
    }
    if (p === '/peer/state') return send(res, 200, st);
    // etcd's peer handler answers /version and /members too: what a client given a peer URL meets
    if (p === '/version' && req.method === 'GET') return send(res, 200, versionBody());
    if (p === '/members' && req.method === 'GET') return send(res, 200, peerMembersText(), true);
    // etcd 3.5+'s peer handler: whether a downgrade is enabled
    if (p === '/downgrade/enabled' && cmp(minorVersion, '3.5') >= 0) return send(res, 200, st.downgrade ? 'true' : 'false', true);
    const body = jsonOf((await readBody(req)).text);
    if (body === undefined) return send(res, 400, { error: 'invalid JSON body' });
    if (p === '/peer/append') {
      if (!isAppend(body)) return send(res, 400, { error: 'an append needs leader, term, revision, key and kv' });
      await applyAppend(body);
      return send(res, 200, { revision: st.revision });
    }
    if (p === '/peer/downgrade') {
      const o = asObject(body);
      if (leader !== name) return send(res, 503, { code: 14, message: 'etcdserver: not the leader' });
      const r = downgradeAction(o.action, textOf(o.version) ?? '');
      return r.ok ? send(res, 200, r) : send(res, 400, { code: r.code, message: r.message });
    }
    if (p === '/peer/delete') {
      if (!isPeerDelete(body)) return send(res, 400, { error: 'a delete needs a key' });
      return send(res, 200, await leaderDelete(body));
    }
    if (p === '/peer/put') {
      if (!isPeerPut(body)) return send(res, 400, { error: 'a put needs a key and a value' });
      return send(res, 200, await leaderPut(body.key, body.value));
    }
    return send(res, 404, { error: 'not found' });
  })().catch((err) => send(res, 503, { error: (err as Error).message }));
});

// ---- heartbeat: reachability, leader, catch-up, cluster version ------------------------------
let ticking = false;
async function tick(): Promise<void> {
  if (ticking) return;
  if (!existsSync(dataDir)) {
    // The sandbox was removed under us (e.g. a demo cleaned up its temp dir): do not linger.
    log('W', `data dir ${dataDir} is gone: exiting`);
    process.exit(1);
  }
  writeV2Snapshot();
  ticking = true;
  try {
    // The leader's ping is its heartbeat (it names itself); a follower's only asks.
    const beat = leader === name && !fault().muteHeartbeats ? `/peer/ping?leader=${encodeURIComponent(name)}` : '/peer/ping';
    await Promise.all(
      peers.map(async (p) => {
        try {
          const info = await peerCall(p.peerUrl, beat);
          if (!isPing(info)) throw new Error(`peer ${p.name}: not a ping answer`);
          if (!p.reachable) log('I', `peer ${p.name} became active`);
          p.reachable = true;
          p.lastSeen = performance.now();
          p.info = info;
          if (info.clientUrl && st.clients[p.name] !== info.clientUrl) st.clients[p.name] = info.clientUrl;
          if (cmp(info.version, minorVersion) > 0 && !p.seenHigher) {
            p.seenHigher = true;
            log('W', `the local member version ${serverVersion} is not up to date: member ${p.name} has a higher version ${info.version}`);
          }
        } catch (err) {
          const gone = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
          // Not answering for a moment is not being gone: keep the peer until an election timeout passed.
          // (How long it was silent is said either way, so a test holds the member to that on any machine.)
          const silent = Math.round(performance.now() - p.lastSeen);
          if (!gone && silent < electionMs) {
            if (p.reachable) log('W', `peer ${p.name} did not answer a heartbeat (silent for ${silent} ms; kept until the election timeout, ${electionMs} ms)`);
            return;
          }
          if (p.reachable) {
            if (!gone) log('W', `peer ${p.name} has not answered for ${silent} ms (election timeout ${electionMs} ms)`);
            log('W', `lost the TCP streaming connection with peer ${p.name} (stream MsgApp v2 reader)`);
            log('W', `peer ${p.name} became inactive (message send to peer failed)`);
          }
          p.reachable = false;
          p.seenHigher = false;
        }
      }),
    );
    const live = peers.filter((p) => p.reachable && p.info);
    const maxTerm = Math.max(term, ...live.map((p) => p.info!.term));
    if (!hasQuorum()) {
      if (leader) log('W', `lost quorum (${reachableCount()}/${clusterSize} members reachable): no leader`);
      leader = '';
    } else if (leader === name) {
      // One leader per term: a rival with a higher term, or the same term and a lower name, wins.
      const rival = live.find((p) => p.info!.leader === p.name && (p.info!.term > term || (p.info!.term === term && p.name < name)));
      if (rival) {
        log('I', `raft.node: ${memberId} stepped down: ${rival.info!.id} leads at term ${rival.info!.term}`);
        leader = rival.name;
        term = rival.info!.term;
      }
    } else {
      const current = live.find((p) => p.name === leader && p.info!.leader === p.name);
      if (!current) {
        const claimed = live.filter((p) => p.info!.leader === p.name).sort((a, b) => b.info!.term - a.info!.term)[0];
        if (claimed) {
          if (leader !== claimed.name) log('I', `raft.node: ${memberId} elected leader ${claimed.info!.id} at term ${claimed.info!.term}`);
          leader = claimed.name;
          term = claimed.info!.term;
        } else {
          const best = nonEmpty({ name, revision: st.revision }, ...live.map((p) => ({ name: p.name, revision: p.info!.revision }))).sort(
            (a, b) => b.revision - a.revision || a.name.localeCompare(b.name),
          )[0];
          if (best.name === name) {
            if (leader) log('I', `${name} is starting a new election at term ${maxTerm}`);
            term = maxTerm + 1;
            leader = name;
            log('I', `raft.node: ${memberId} elected leader ${memberId} at term ${term}`);
          } else leader = '';
        }
      }
    }
    notePublished();
    const lp = live.find((p) => p.name === leader);
    if (lp && lp.info!.revision > st.revision) await syncFromLeader().catch(() => undefined);
    if (lp && leader !== name && (lp.info!.downgrade ?? '') !== (st.downgrade ?? '')) {
      // The downgrade job is the leader's: followers take it (and its end) from the leader.
      if (lp.info!.downgrade) st.downgrade = lp.info!.downgrade;
      else delete st.downgrade;
      persist();
    }
    // (held where a test puts it: every member reports it, as a fresh cluster's members all report 3.0)
    const held = fault().clusterVersionAt;
    if (held) {
      if (st.clusterVersion !== held) {
        st.clusterVersion = held;
        persist();
      }
      return;
    }
    const lowered = Boolean(st.downgrade) && lp && lp.info!.clusterVersion && st.clusterVersion && cmp(lp.info!.clusterVersion, st.clusterVersion) < 0;
    if (lowered) {
      log('N', `updated the cluster version from ${st.clusterVersion} to ${lp.info!.clusterVersion} (downgrade)`);
      st.clusterVersion = lp.info!.clusterVersion;
      persist();
    }
    if (lp && lp.info!.clusterVersion && (!st.clusterVersion || cmp(lp.info!.clusterVersion, st.clusterVersion) > 0)) {
      if (st.clusterVersion) log('N', `updated the cluster version from ${st.clusterVersion} to ${lp.info!.clusterVersion}`);
      else log('N', `set the initial cluster version to ${lp.info!.clusterVersion}`);
      st.clusterVersion = lp.info!.clusterVersion;
      persist();
    }
    if (leader === name && live.length === peers.length) {
      // The cluster version is the lowest of the members, raised only when every member is reachable.
      const lowest = nonEmpty(minorVersion, ...live.map((p) => p.info!.version)).sort(cmp)[0];
      const highest = nonEmpty(minorVersion, ...live.map((p) => p.info!.version))
        .sort(cmp)
        .at(-1);
      if (st.downgrade) {
        // While a downgrade is enabled the cluster version stays at its target; it ends once every member runs it.
        if (highest === st.downgrade && !fault().downgradeLingers) {
          log('N', `the cluster has been downgraded to ${st.downgrade}`);
          delete st.downgrade;
          persist();
        }
      } else if (!st.clusterVersion || (cmp(lowest, st.clusterVersion) > 0 && !fault().clusterVersionLags)) {
        if (st.clusterVersion) {
          log('N', `updated the cluster version from ${st.clusterVersion} to ${lowest}`);
          log('I', `enabled capabilities for version ${lowest}`);
        } else log('N', `set the initial cluster version to ${lowest}`);
        st.clusterVersion = lowest;
        persist();
      }
    }
  } finally {
    ticking = false;
  }
}

function listen(server: Server, url: URL): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(url.port), url.hostname, () => resolve());
  });
}

let timer: NodeJS.Timeout | undefined;
// A promise chain, not top-level await: the single executable bundles this program as CommonJS.
void listen(peerServer, peerUrl)
  .catch((err) => fail(`listen on peer URL ${peerUrl.href}: ${(err as Error).message}`))
  .then(() => listen(clientServer, clientUrl))
  .catch((err) => fail(`listen on client URL ${clientUrl.href}: ${(err as Error).message}`))
  .then(() => {
    log('I', `kvserver ${serverVersion} started (member ${memberId}, data dir ${dataDir}); serving client requests on ${clientUrl.href}, gateway ${prefix}`);
    timer = setInterval(() => void tick(), heartbeatMs);
    void tick();
  });

function shutdown(signal: string): void {
  log('N', `received ${signal} signal, shutting down...`);
  clearInterval(timer);
  persist();
  clientServer.close();
  peerServer.close();
  clientServer.closeAllConnections();
  peerServer.closeAllConnections();
  setTimeout(() => process.exit(0), 20).unref();
}
process.on('SIGTERM', () => shutdown('terminated'));
process.on('SIGINT', () => shutdown('interrupt'));

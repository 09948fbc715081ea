// The etcd side of kv-ladder.bench.mjs: what the hand procedure asks of the members (over the JSON
// gateway, as etcdctl would) and the waits both sides share.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const POLL_MS = 100;

/** Whether release `v` ("3.6.16") is `floor` ("3.6.11") or later. */
export const atLeast = (v, floor) => {
  const [a, b] = [v, floor].map((x) => x.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return true;
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export async function until(check, what, timeoutMs = 300_000, pollMs = POLL_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}
export async function get(url) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return { status: r.status, body: await r.text() };
  } catch {
    return undefined;
  }
}
/** The gateway prefix of a minor (3.2 /v3alpha, 3.3 /v3beta, 3.4+ /v3). */
export const prefixOf = (minor) => (minor === '3.2' ? '/v3alpha' : minor === '3.3' ? '/v3beta' : '/v3');
export async function post(url, body) {
  try {
    const r = await fetch(url, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(2000) });
    return { status: r.status, body: await r.text() };
  } catch {
    return undefined;
  }
}
/** A quorum read (a linearizable range of one key), as etcdctl endpoint health does. */
export const healthy = async (m, minor) =>
  (await post(`${m.clientUrl}${prefixOf(minor)}/kv/range`, { key: Buffer.from('health').toString('base64'), count_only: true }))?.status === 200;
/** The member the first answering member names its leader. */
export async function leaderOf(c, minor) {
  for (const m of c.members) {
    const r = await post(`${m.clientUrl}${prefixOf(minor)}/maintenance/status`, {});
    const id = r?.status === 200 ? JSON.parse(r.body).leader : undefined;
    if (!id) continue;
    for (const x of c.members) {
      const s = await post(`${x.clientUrl}${prefixOf(minor)}/maintenance/status`, {});
      if (s?.status === 200 && JSON.parse(s.body).header?.member_id === id) return x;
    }
  }
  return c.members[0];
}
export const clusterVersion = async (c, want) =>
  (await Promise.all(c.members.map((m) => get(`${m.clientUrl}/version`)))).every((r) => r && JSON.parse(r.body).etcdcluster === want);

/** Whether a process is there (and not a zombie). */
export function existsPid(pid) {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** Bytes under a directory (the data dir's size, shown beside the rows). */
export function du(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? du(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

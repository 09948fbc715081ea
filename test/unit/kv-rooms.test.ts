import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const KV = fileURLToPath(new URL('../../src/kv', import.meta.url));
const DEVELOPMENT = fileURLToPath(new URL('../../docs/development.md', import.meta.url));

/**
 * The kv wing's rooms, each named by the one concept it holds (issue 46: rooms named by history, not by
 * concept — `local/` was a drawer of the sandbox, the release cache and the backups; `upgrade/wal-v2.ts`
 * read data files). The 500-line and 15-file caps (room-cycles.test.ts) are the alarm; this table is the
 * rule they stand for: a new room needs its sentence here and in docs/development.md, and a file belongs
 * where its concept's sentence says.
 */
const ROOMS: Record<string, string> = {
  cluster: "talking to a live cluster: the gateway client, sessions, observation, membership, etcdctl's words",
  ops: 'the single requests of the etcdctl-like verbs (range, put, txn, leases, members, maintenance)',
  snapshot: 'snapshots: saved over the wire, streamed, verified page by page (bbolt, the backend db), their status',
  wal: "a member's write-ahead log read offline (the v2 requests it still holds)",
  templates: 'command templates: their grammar, where each value lands, and the option grammar of the shells and wrappers they cross',
  drivers: "how members are stopped, started and looked at where they run: the sandbox's, commands, systemd",
  rules: 'the rulebook of each hop: what the guides and changelogs refuse, and the fix for each',
  journal: 'the record on disk that makes the identical command resume after a kill',
  trial: 'the target binary started beside a member on its settings and a copy of its data: the proof',
  rehearsal: 'the whole plan rehearsed on a clone of the cluster (copied data, namespaces of its own) by opsctl itself, before the first stop',
  containers:
    "members that are podman or docker containers of the etcd image: the engine's CLI, a container's settings from inspect, the driver (a hop is a new container from the next image), the proof on a copy of the data volume",
  upgrade: 'one hop of a rolling upgrade: plan, pre-flight, the member cycle, the gate between members',
  ladder: 'several hops in one run, the facts each needs, and where the fixes go between them',
  v2fix: "the v2 fixes before 3.6 and 3.7: a member's WAL brought past its v2 requests (restarted with snapshot-count 1, or written past)",
  restore: 'the ways back: a downgrade, a rollback to the restore point, a restore from a snapshot',
  sandbox: 'the local cluster opsctl makes (`kv sandbox`): its file, its config, and what its members run',
  release: "etcd's release archives: fetched, verified and cached (`kv release`)",
  backups: 'what upgrades and restores left on this machine (`kv backups list|prune`)',
  offsite: 'snapshots kept off the host: S3-compatible stores, multipart uploads, checksums',
  report: 'what a run did, for people: the text and HTML reports',
};

/** Names that say where a file lives rather than what it is: a room named so is a drawer. */
const DRAWERS = /^(local|misc|util|utils|common|lib|helpers|shared|stuff|other)$/;

describe("the kv wing's rooms, each named by its concept", () => {
  // a folder with no source (one a move left empty on a developer's disk) is not a room
  const folders = readdirSync(KV).filter((f) => statSync(join(KV, f)).isDirectory() && readdirSync(join(KV, f)).some((x) => x.endsWith('.ts')));

  it('every folder of src/kv is a room of the table, and every room of the table is a folder', () => {
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((f) => !(f in ROOMS)).sort()).toEqual([]);
    expect(Object.keys(ROOMS).filter((r) => !folders.includes(r))).toEqual([]);
  });

  it('no room is a drawer (the check itself knows one)', () => {
    expect(DRAWERS.test('local')).toBe(true);
    expect(folders.filter((f) => DRAWERS.test(f))).toEqual([]);
  });

  it('docs/development.md names every room in its layout', () => {
    const doc = readFileSync(DEVELOPMENT, 'utf8');
    const layout = doc.slice(doc.indexOf('src/kv/'), doc.indexOf('src/completion/'));
    expect(layout.length).toBeGreaterThan(100);
    expect(Object.keys(ROOMS).filter((r) => !layout.includes(`${r}/`))).toEqual([]);
  });

  it('the WAL is read only in wal/, the release cache only in release/ (the moves of issue 46 stay made)', () => {
    const files = readdirSync(KV, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const declares = (re: RegExp) => files.filter((f) => re.test(readFileSync(join(KV, f), 'utf8'))).map((f) => f.split('/')[0]);
    expect(new Set(declares(/export function walV2\w+\(/))).toEqual(new Set(['wal']));
    expect(new Set(declares(/export async function getRelease\(/))).toEqual(new Set(['release']));
  });
});

import type { TransportRequest, TransportResponse } from '../../src/core/http.js';
import type { ClusterSpec, MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import type { MemberDriver, MemberTarget } from '../../src/kv/drivers/driver.js';
import type { StepReporter } from '../../src/kv/upgrade/options.js';
import { header, memberListReply, statusReply } from './kv-gateway-shapes.js';
import { prefixOf } from './kv-gateway-mock.js';

/** One fake member: its name, id, the minor it runs (or last ran) and whether its process runs. */
export interface FakeMember {
  name: string;
  id: string;
  /** The minor it runs (or last ran), e.g. '3.5'. */
  version: string;
  running: boolean;
}

export interface FakeClusterOptions {
  /** The members' names and the minor each runs; every member runs at first. */
  members: Array<{ name: string; version: string; running?: boolean }>;
  /** The revision every running member holds (and a restored one: restoreData sets it). */
  revision?: number;
  /** Keys a count-only range of the whole key space answers. */
  keys?: number;
}

/**
 * A cluster of fake members in this process, for the unit tests of the cluster-wide verbs' domain pieces
 * (kv/restore): no process, no socket. Its session answers the kv client's gateway requests from the
 * members' state (a member not running refuses the connection; a member runs a minor version, knows the
 * lowest-named running member as its leader while a quorum runs, and reports the lowest minor that runs
 * as the cluster version), and its driver changes that state, logging every call in order.
 */
export class FakeCluster {
  readonly members: FakeMember[];
  /** The driver's calls in order: `stop kv1`, `start kv1 3.4`, `restore-data kv1`… */
  readonly log: string[] = [];
  /** The requests a test's own routes answered: `member path body`. */
  readonly asked: string[] = [];
  /** Requests no fake answers (a test expects none). */
  readonly unexpected: string[] = [];
  revision: number;
  keys: number;
  /** Members whose process exits right after a start (start succeeds, the process is gone). */
  readonly exitsOnStart = new Set<string>();
  /** Members whose start command fails (throws). */
  readonly startFails = new Set<string>();
  /** Called at each driver call before it acts (a test kills the run there: it throws). */
  onCall?: (call: string) => void;
  /** Answers of a test's own for gateway paths ('/maintenance/downgrade'): an HTTP status and a JSON body. */
  readonly routes: Record<string, (m: FakeMember, body: Record<string, unknown>) => { status: number; body: unknown }> = {};

  constructor(o: FakeClusterOptions) {
    this.members = o.members.map((m, i) => ({ name: m.name, id: String(1001 + i), version: m.version, running: m.running ?? true }));
    this.revision = o.revision ?? 42;
    this.keys = o.keys ?? 7;
  }

  member(name: string): FakeMember {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`fake-cluster: no member ${name}`);
    return m;
  }

  /** The cluster as a verb resolved it: one endpoint per member. */
  spec(key = 'fakecluster01'): ClusterSpec {
    return {
      source: 'file',
      key,
      members: this.members.map((m) => ({ name: m.name, endpoint: `http://${m.name}.fake:2379`, peerUrl: `http://${m.name}.fake:2380` })),
    };
  }

  private leader(): FakeMember | undefined {
    const up = this.members.filter((m) => m.running);
    return up.length * 2 > this.members.length ? up[0] : undefined;
  }

  /** The lowest minor that runs, as etcd reports a cluster version ('3.4.0'). */
  private clusterVersion(): string {
    const minors = this.members.filter((m) => m.running).map((m) => m.version);
    const low = minors.sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))[0] ?? '3.0';
    return `${low}.0`;
  }

  /** A session whose every request is answered here (no socket). */
  session(): KvSession {
    const answer = (url: URL, req: TransportRequest) => this.answer(url, req);
    return new (class extends KvSession {
      override transport() {
        return answer;
      }
    })();
  }

  private answer(url: URL, req: TransportRequest): Promise<TransportResponse> {
    const m = this.members.find((x) => url.hostname === `${x.name}.fake`);
    if (!m || !m.running) return Promise.reject(Object.assign(new Error(`connect ECONNREFUSED ${url.host}`), { code: 'ECONNREFUSED' }));
    const full = `${m.version}.9`;
    const def = { id: m.id, version: full };
    if (url.pathname === '/version') return json(200, { etcdserver: full, etcdcluster: this.clusterVersion() });
    const prefix = prefixOf(full);
    if (!url.pathname.startsWith(`${prefix}/`)) return text(404, '404 page not found\n');
    const path = url.pathname.slice(prefix.length);
    const leader = this.leader();
    const body = typeof req.body === 'string' && req.body ? (JSON.parse(req.body) as Record<string, unknown>) : {};
    const own = this.routes[path];
    if (own) {
      this.asked.push(`${m.name} ${path} ${JSON.stringify(body)}`);
      const r = own(m, body);
      return json(r.status, r.body);
    }
    if (path === '/maintenance/status') return json(200, statusReply(def, { leader: leader?.id ?? '0', revision: this.revision }));
    if (path === '/maintenance/alarm') return json(200, { header: header(def, this.revision) });
    if (path === '/cluster/member/list')
      return json(
        200,
        memberListReply(
          def,
          this.revision,
          this.members.map((x) => ({ id: x.id, name: x.name, peer: `http://${x.name}.fake:2380`, client: `http://${x.name}.fake:2379` })),
        ),
      );
    if (path === '/kv/range') {
      if (!leader) return json(503, { error: 'etcdserver: request timed out', message: 'etcdserver: request timed out', code: 14 });
      const count = body.count_only && body.range_end ? { count: String(this.keys) } : {};
      return json(200, { header: header(def, this.revision), ...count });
    }
    this.unexpected.push(`${m.name} ${req.method} ${url.pathname} ${JSON.stringify(body)}`);
    return json(501, { error: `fake-cluster: no answer for ${path}` });
  }

  /** The member driver of this cluster: each call logged, then the state changed. */
  driver(extra: Partial<MemberDriver> = {}): MemberDriver {
    const call = (line: string) => {
      this.log.push(line);
      this.onCall?.(line);
    };
    return {
      type: 'command',
      stop: (m: MemberSpec) => {
        call(`stop ${m.name}`);
        this.member(m.name).running = false;
        return Promise.resolve();
      },
      isRunning: (m: MemberSpec) => Promise.resolve(this.member(m.name).running),
      start: (m: MemberSpec, target: MemberTarget) => {
        call(`start ${m.name} ${target.version}`);
        if (this.startFails.has(m.name)) return Promise.reject(new Error(`the start command of ${m.name} exited with code 1`));
        const x = this.member(m.name);
        x.version = target.version;
        x.running = !this.exitsOnStart.has(m.name);
        return Promise.resolve();
      },
      current: (m: MemberSpec) => ({ version: this.member(m.name).version }),
      ...extra,
    };
  }
}

function respond(statusCode: number, contentType: string, s: string): Promise<TransportResponse> {
  const bytes = Buffer.from(s, 'utf8');
  return Promise.resolve({
    statusCode,
    headers: { 'content-type': contentType, 'content-length': String(bytes.length) },
    body: {
      async *[Symbol.asyncIterator]() {
        yield await Promise.resolve(new Uint8Array(bytes));
      },
      text: () => Promise.resolve(s),
      destroy: () => undefined,
    },
  });
}
const json = (status: number, v: unknown) => respond(status, 'application/json', JSON.stringify(v));
const text = (status: number, s: string) => respond(status, 'text/plain; charset=utf-8', s);

/** A reporter that keeps every line it is told (`begin`, `done`, `fail`, `note`, `update`), in order. */
export function recordingReporter(lines: string[] = []): StepReporter & { lines: string[] } {
  return {
    lines,
    begin(t: string) {
      lines.push(`begin ${t}`);
      return {
        update: (u: string) => void lines.push(`update ${u}`),
        done: (d: string) => void lines.push(`done ${d}`),
        fail: (f: string) => void lines.push(`fail ${f}`),
      };
    },
    note: (n: string) => void lines.push(`note ${n}`),
  };
}

/** A clock that moves `stepMs` each time it is read (the waits' deadlines pass without waiting that long). */
export function fakeClock(startMs = Date.UTC(2026, 0, 1), stepMs = 5): () => number {
  let t = startMs;
  return () => (t += stepMs);
}

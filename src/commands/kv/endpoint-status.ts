import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { endpointStatus, statusFacts, type StatusFacts } from '../../kv/ops/maintenance.js';
import { humanBytes, statusRow } from '../../kv/ops/simple.js';
import { eachExit, hostPort, reachEach, shaped } from './lib/ops.js';
import { boxTable, endpointStatusJson, statusHeaders } from '../../kv/ops/etcdctl-out.js';
import type { spec } from './endpoint-status.spec.js';

type Row = StatusFacts | { endpoint: string; error: string };

/** A size column: etcdctl's go-humanize text; blank where the member's version does not say. */
const size = (key: 'db_size' | 'db_size_in_use' | 'db_size_quota', header: string) => ({
  key,
  header,
  get: (x: Row) => ('error' in x || x[key] === null ? '' : humanBytes(x[key])),
});
const fact = (key: keyof StatusFacts, header: string) => ({ key, header, get: (x: Row) => ('error' in x ? '' : x[key]) });

/**
 * `kv endpoint status`: every fact etcdctl gives of each member, on that member's version: id, version,
 * storage version (3.6+), db size, in use and the share not in use (3.4+), quota (3.6+), leader, learner
 * (3.4+), raft term, index, applied index (3.4+), errors, the downgrade's target and whether it is
 * enabled (3.6+). A fact the member's version does not give is blank (null in --json). Exit 1 when a
 * member does not answer, 4 when one refused the credentials.
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { r, members } = await reachEach(ctx, opts, { named: false });
  const got = await Promise.all(
    members.map((m) =>
      endpointStatus(r.client(m)).then(
        (s) => ({ m, s }),
        (err: Error) => ({ m, error: err.message, err }),
      ),
    ),
  );
  const lines: string[] = [];
  const cells: string[][] = [];
  const answers: Array<{ endpoint: string; raw: string }> = [];
  const rows: Row[] = got.map((g) => {
    if ('error' in g) {
      ctx.io.warn(`Failed to get the status of endpoint ${hostPort(g.m)} (${g.error})`);
      return { endpoint: hostPort(g.m), error: g.error };
    }
    const row = statusRow(hostPort(g.m), g.s);
    cells.push(row);
    lines.push(row.join(', '));
    if (g.s.raw !== undefined) answers.push({ endpoint: hostPort(g.m), raw: g.s.raw });
    return statusFacts(hostPort(g.m), g.s);
  });
  return shaped(opts, {
    data: rows,
    columns: [
      'endpoint',
      'id',
      'version',
      fact('storage_version', 'storage version'),
      size('db_size', 'db size'),
      size('db_size_in_use', 'in use'),
      { key: 'not_in_use', header: 'not in use', get: (x: Row) => ('error' in x || x.not_in_use_percent === null ? '' : `${x.not_in_use_percent}%`) },
      size('db_size_quota', 'quota'),
      'leader',
      fact('learner', 'learner'),
      fact('raft_term', 'raft term'),
      fact('raft_index', 'raft index'),
      fact('raft_applied_index', 'applied index'),
      { key: 'errors', get: (x: Row) => ('error' in x ? x.error : x.errors.join(', ')) },
      fact('downgrade_target_version', 'downgrade target'),
      fact('downgrade_enabled', 'downgrade enabled'),
    ],
    simple: lines,
    etcdctlJson: endpointStatusJson(answers),
    // (one header for every row: the widest row's, as the etcdctl of the newest member's version prints it)
    etcdctlTable: boxTable(statusHeaders(Math.max(0, ...cells.map((c) => c.length))), cells),
    exitCode: eachExit(
      ctx,
      got.map((g) => ('err' in g ? g.err : undefined)),
    ),
  });
}

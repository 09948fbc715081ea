import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { endpointStatus } from '../../kv/ops/maintenance.js';
import { humanBytes, statusRow } from '../../kv/ops/simple.js';
import { eachExit, hostPort, reachEach, shaped } from './lib/ops.js';
import type { spec } from './endpoint-status.spec.js';

/** `kv endpoint status`: each member's id, version, db size, leadership, raft term and index (exit 1 when one does not answer, 4 when one refused the credentials). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { r, members } = await reachEach(ctx, opts);
  const got = await Promise.all(
    members.map((m) =>
      endpointStatus(r.client(m)).then(
        (s) => ({ m, s }),
        (err: Error) => ({ m, error: err.message, err }),
      ),
    ),
  );
  const lines: string[] = [];
  const rows = got.map((g) => {
    if ('error' in g) {
      ctx.io.warn(`Failed to get the status of endpoint ${hostPort(g.m)} (${g.error})`);
      return { endpoint: hostPort(g.m), error: g.error };
    }
    lines.push(statusRow(hostPort(g.m), g.s).join(', '));
    return {
      endpoint: hostPort(g.m),
      id: BigInt(g.s.id).toString(16),
      version: g.s.version,
      db_size: g.s.dbSize,
      ...(g.s.dbSizeInUse !== undefined ? { db_size_in_use: g.s.dbSizeInUse } : {}),
      leader: g.s.isLeader,
      learner: g.s.isLearner,
      raft_term: Number(g.s.raftTerm),
      raft_index: Number(g.s.raftIndex),
      ...(g.s.raftAppliedIndex !== undefined ? { raft_applied_index: Number(g.s.raftAppliedIndex) } : {}),
      revision: Number(g.s.revision),
      errors: g.s.errors,
    };
  });
  return shaped(opts, {
    data: rows,
    columns: [
      'endpoint',
      'id',
      'version',
      { key: 'db_size', header: 'db size', get: (x: { db_size?: number }) => (x.db_size === undefined ? '' : humanBytes(x.db_size)) },
      'leader',
      'learner',
      'raft_term',
      'raft_index',
    ],
    simple: lines,
    exitCode: eachExit(
      ctx,
      got.map((g) => ('err' in g ? g.err : undefined)),
    ),
  });
}

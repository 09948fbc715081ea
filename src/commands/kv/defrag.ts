import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { eachExit, hostPort, reachEach, shaped } from './lib/ops.js';
import type { spec } from './defrag.spec.js';

/** `kv defrag`: each member in turn (one at a time: a member's reads and writes wait while it runs); exit 1 if any failed, 4 if one refused the credentials. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { r, members } = await reachEach(ctx, opts);
  const rows: Array<{ name: string; endpoint: string; ok: boolean; error?: string }> = [];
  const lines: string[] = [];
  const errors: unknown[] = [];
  for (const m of members) {
    // a defragmentation rewrites the whole db: its own, longer deadline
    const err = await r
      .client(m, Math.max(r.requestMs, 60_000))
      .defragment()
      .then(
        () => undefined,
        (e: Error) => {
          errors.push(e);
          return e.message;
        },
      );
    rows.push({ name: m.name, endpoint: m.endpoint, ok: !err, ...(err ? { error: err } : {}) });
    lines.push(err ? `Failed to defragment etcd member[${hostPort(m)}] (${err})` : `Finished defragmenting etcd member[${hostPort(m)}]`);
  }
  return shaped(opts, { data: rows, columns: ['name', 'endpoint', 'ok', 'error'], simple: lines, exitCode: eachExit(ctx, errors) });
}

import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { defragLine } from '../../kv/ops/simple.js';
import { serverVersion } from '../../kv/ops/versions.js';
import { eachExit, hostPort, reachEach, shaped } from './lib/ops.js';
import type { spec } from './defrag.spec.js';

/**
 * `kv defrag`: each member in turn (one at a time: a member's reads and writes wait while it runs); exit 1
 * if any failed, 4 if one refused the credentials. `-w simple` prints that member's etcdctl lines: a
 * failure on stderr, 3.6's with its time.
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { r, members } = await reachEach(ctx, opts);
  const rows: Array<{ name: string; endpoint: string; ok: boolean; took_ms: number; error?: string }> = [];
  const lines: string[] = [];
  const errors: unknown[] = [];
  for (const m of members) {
    // a defragmentation rewrites the whole db: its own, longer deadline
    const c = r.client(m, Math.max(r.requestMs, 60_000));
    // only etcdctl's lines differ by version (3.6 adds the time): asked for -w simple alone
    const version = opts.writeOut === 'simple' ? await serverVersion(c).catch(() => undefined) : undefined;
    const t0 = process.hrtime.bigint();
    const err = await c.defragment().then(
      () => undefined,
      (e: Error) => {
        errors.push(e);
        return e.message;
      },
    );
    const took = Number(process.hrtime.bigint() - t0);
    rows.push({ name: m.name, endpoint: m.endpoint, ok: !err, took_ms: Math.round(took / 1e5) / 10, ...(err ? { error: err } : {}) });
    const line = defragLine(hostPort(m), version, took, err);
    if (!err) lines.push(line);
    else if (opts.writeOut === 'simple') ctx.io.err(line);
  }
  return shaped(opts, {
    data: rows,
    columns: ['name', 'endpoint', 'ok', { key: 'took_ms', header: 'took', get: (x: (typeof rows)[number]) => `${x.took_ms} ms` }, 'error'],
    simple: lines,
    exitCode: eachExit(ctx, errors),
  });
}

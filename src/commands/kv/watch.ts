import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { UsageError } from '../../core/errors.js';
import { kvJson, watch } from '../../kv/ops/keys.js';
import { watchLines } from '../../kv/ops/simple.js';
import { durationFlag } from '../../core/duration.js';
import { etcdSaid, reach } from './lib/ops.js';
import type { spec } from './watch.spec.js';

/**
 * `kv watch KEY [END] [--prefix]`: each change as it happens, printed at once (etcdctl's lines with
 * -w simple, one JSON object per line with -w json/--json, a tab-separated line otherwise), until
 * Ctrl-C, --max-events or --timeout (both exit 0).
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (opts.prefix && opts.rangeEnd !== undefined)
    throw new UsageError('--prefix and a range end: give one of them', { hint: 'opsctl kv watch KEY --prefix, or opsctl kv watch KEY END' });
  if (opts.rev !== undefined && !/^\d+$/.test(opts.rev))
    throw new UsageError(`--rev: "${opts.rev}" is not a revision`, { field: '--rev', hint: 'give a whole number' });
  const max = opts.maxEvents === undefined ? Infinity : Number(opts.maxEvents);
  if (!(max >= 1) || (opts.maxEvents !== undefined && !/^\d+$/.test(opts.maxEvents)))
    throw new UsageError(`--max-events: "${opts.maxEvents}" is not a count`, { field: '--max-events', hint: 'give a whole number, 1 or more' });
  const timeoutMs = opts.timeout === undefined ? 2 ** 31 - 1 : durationFlag('--timeout', opts.timeout);
  const json = opts.writeOut === 'json' || ctx.jsonOutput;
  const r = await reach(ctx, opts);
  let seen = 0;
  const deadline = Date.now() + timeoutMs;
  await r
    .any((c) =>
      watch(
        c,
        { key: opts.kvKey, end: opts.rangeEnd, prefix: opts.prefix },
        { startRevision: opts.rev, prevKv: opts.prevKv, timeoutMs: Math.max(1, deadline - Date.now()) },
        (e, rev) => {
          if (opts.writeOut === 'simple') ctx.io.out(watchLines(e).join('\n'));
          else if (json)
            ctx.io.out(JSON.stringify({ type: e.type, ...kvJson(e.kv), ...(e.prevKv ? { prev_kv: kvJson(e.prevKv) } : {}), revision: Number(rev) }));
          else ctx.io.out([e.type, e.kv.key, e.kv.value, e.kv.modRevision].join('\t'));
          return ++seen < max;
        },
      ),
    )
    .catch((err: Error) => {
      // --timeout's end is a normal end
      if (opts.timeout !== undefined && Date.now() >= deadline - 50 && /no complete answer/.test(err.message)) return;
      etcdSaid(err, `watch ${opts.kvKey}`);
    });
  return {};
}

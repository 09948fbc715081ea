import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { readLocalFile } from '../../core/local-file.js';
import { parseTxn, txn } from '../../kv/ops/txn.js';
import { txnLines } from '../../kv/ops/simple.js';
import { kvJson } from '../../kv/ops/keys.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './txn.spec.js';

const PROMPTS = ['compares:', 'success requests (get, put, del):', 'failure requests (get, put, del):'];

/** The three blocks asked on a terminal as etcdctl -i asks them: a prompt each, a blank line ends each. */
async function ask(ctx: Context): Promise<string> {
  const rl = createInterface({ input: ctx.io.stdin, terminal: false });
  const blocks: string[] = [];
  try {
    for (const p of PROMPTS) {
      ctx.io.err(p);
      const lines: string[] = [];
      for (;;) {
        const line = await rl.question('');
        if (line.trim() === '') break;
        lines.push(line);
      }
      blocks.push(lines.join('\n'));
    }
  } finally {
    rl.close();
  }
  return blocks.join('\n\n');
}

/** `kv txn`: etcdctl's transaction language from --file, stdin, or asked on a terminal; exit 0 whichever branch ran (SUCCESS or FAILURE, as etcdctl). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const source = opts.file && opts.file !== '-' ? resolve(ctx.cwd, opts.file) : 'stdin';
  const text =
    source !== 'stdin'
      ? await readLocalFile(source, { what: '--file:', exitCode: 2, maxBytes: 1024 * 1024 })
      : ctx.io.isStdinTTY && !ctx.noInput
        ? await ask(ctx)
        : await ctx.io.readStdin();
  const t = parseTxn(text, source);
  const r = await reach(ctx, opts);
  const res = await r.any((c) => txn(c, t)).catch((err) => etcdSaid(err, 'txn'));
  return shaped(opts, {
    data: { succeeded: res.succeeded, responses: res.responses.map((x) => (x.kind === 'get' ? { ...x, kvs: x.kvs.map(kvJson) } : x)) },
    simple: txnLines({ succeeded: res.succeeded, responses: res.responses }),
  });
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Context } from '../../context.js';
import { PartialError } from '../../core/errors.js';
import { IOStreams } from '../../core/io.js';
import type { CommandResult } from '../../core/output.js';
import { shellWord } from '../../core/hints.js';
import { DEMO_SECTIONS } from './steps.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './demo.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * Runs every demo step in-process through the real CLI (the same main() as the binary) against a
 * fresh embedded state in a temporary directory, echoing each command and its output.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  // main() comes in through the context (cli.ts passes it): importing cli.ts here would be an import cycle.
  const { main } = ctx;
  if (!main) throw new Error('demo: this context was made without main()');
  const dir = await mkdtemp(join(tmpdir(), 'opsctl-demo-'));
  const env: NodeJS.ProcessEnv = { ...ctx.env, OPSCTL_CONFIG_DIR: dir, CI: '1', NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (/^OPSCTL_(TRACKER|AUTH|API|LABELS)_URL$|^OPSCTL_(TRACKER|ACCESS)_TOKEN$|^OPSCTL_PROFILE$/.test(k)) delete env[k];
  const vars: Record<string, string> = {};
  const results: Array<{ job: string; step: string; exit: number; ok: boolean; ms: number }> = [];
  const io = ctx.io;
  const bold = (s: string) => io.color.bold(s);
  io.out(bold(`opsctl demo: a tour against the embedded mock (state in ${dir})`));
  try {
    for (const section of DEMO_SECTIONS) {
      io.out(`\n${bold(`== ${section.job}`)}`);
      for (const step of section.steps) {
        const argv = typeof step.argv === 'function' ? step.argv(vars) : step.argv;
        io.out(`\n# ${step.title}\n${io.color.cyan(`$ opsctl ${argv.map(shellWord).join(' ')}`)}`);
        const stdout = new PassThrough();
        const stderr = new PassThrough();
        const chunks: string[] = [];
        stdout.on('data', (c: Buffer) => chunks.push(c.toString()));
        stderr.on('data', (c: Buffer) => io.stdout.write(io.color.dim(c.toString())));
        const stdin = new PassThrough();
        stdin.end(step.stdin ?? '');
        const started = Date.now();
        const exit = await main(argv, {
          env,
          io: new IOStreams({ stdin, stdout, stderr, env, stdinTTY: false, stdoutTTY: false, stderrTTY: false }),
        });
        const out = chunks.join('');
        if (out) io.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
        const ok = (step.expect ?? [0]).includes(exit);
        if (ok) step.capture?.(out, vars);
        io.out(io.color.dim(`(exit ${exit}${ok ? '' : ' — unexpected'})`));
        results.push({ job: section.job, step: step.title, exit, ok, ms: Date.now() - started });
        if (!ok) break;
      }
    }
  } finally {
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok);
  const total = results.reduce((n, r) => n + r.ms, 0);
  io.out(`\n${bold('== summary')}`);
  for (const section of DEMO_SECTIONS) {
    const rs = results.filter((r) => r.job === section.job);
    const good = rs.filter((r) => r.ok).length;
    io.out(`${good === section.steps.length ? '✓' : '✗'} ${section.job}: ${good}/${section.steps.length} steps`);
  }
  io.out(`${results.length} commands in ${(total / 1000).toFixed(1)} s${opts.keep ? `; state kept in ${dir}` : ''}`);
  if (failed.length > 0) throw new PartialError(`demo: ${failed.length} step(s) failed: ${failed.map((f) => f.step).join('; ')}`);
  return {};
}

import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { DYNAMIC_SOURCES, type DynamicSource } from '../../completion/tree.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './complete.spec.js';

export type Options = OptionsOf<typeof spec>;

/** How long a completion may wait for the service (a person is waiting at the Tab key); OPSCTL_COMPLETE_TIMEOUT_MS changes it. */
const DEFAULT_TIMEOUT_MS = 2000;

/**
 * `opsctl __complete SOURCE [PREFIX]`: the names the service knows, one a line, for the completion
 * scripts (as gh's `__complete`). Never an error: a service that is down, slow (past the timeout),
 * refuses the credentials or answers in an unknown shape prints nothing and exits 0, so a Tab key
 * never shows a message in the middle of the line being typed.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const source = DYNAMIC_SOURCES.find((s) => s === opts.source);
  if (!source) return { text: '' };
  const ms = Number(ctx.env.OPSCTL_COMPLETE_TIMEOUT_MS) > 0 ? Number(ctx.env.OPSCTL_COMPLETE_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => {
      ctx.abort.abort('completion timeout');
      resolve([]);
    }, ms);
  });
  const names = await Promise.race([namesOf(source, ctx).catch(() => [] as string[]), late]).finally(() => clearTimeout(timer));
  const unique = [...new Set(names.filter((n) => n.startsWith(opts.prefix ?? '') && !/[\n\r]/.test(n)))];
  return { text: unique.join('\n') };
}

async function namesOf(source: DynamicSource, ctx: Context): Promise<string[]> {
  if (source === 'profiles') {
    const config = await ctx.config();
    const names = Object.keys(config.profiles());
    return ['embedded', ...names.filter((n) => n !== 'embedded')];
  }
  const http = await ctx.http('tracker');
  const named = (list: unknown): string[] =>
    Array.isArray(list) ? list.map((x) => (x as { name?: unknown })?.name).filter((n): n is string => typeof n === 'string') : [];
  if (source === 'states') {
    const workflows = await http.get<Array<{ states?: unknown }>>('/api/v3/workflows');
    return Array.isArray(workflows) ? workflows.flatMap((w) => named(w?.states)) : [];
  }
  return named(await http.get(source === 'labels' ? '/api/v3/labels' : '/api/v3/epics'));
}

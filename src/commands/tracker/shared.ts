import type { Context } from '../../context.js';
import { UsageError, ValidationError } from '../../core/errors.js';
import type { Column } from '../../core/output.js';
import { TrackerClient } from '../../tracker/client.js';
import { ROW_LOADERS } from '@opsctl/shared/tracker/resource-index.js';
import type { ResourceSpec } from '../../tracker/resources.js';

/** The tracker client; its errors carry a hint naming the resource's commands. */
export async function trackerClient(ctx: Context, resource?: ResourceSpec): Promise<TrackerClient> {
  return new TrackerClient(await ctx.http('tracker'), resource);
}

/** The row of the resource a verb is bound to, its module alone (not the whole table). */
export async function resource(name: string): Promise<ResourceSpec> {
  const load = ROW_LOADERS.get(name);
  if (!load) throw new UsageError(`unknown tracker resource "${name}"`);
  return load();
}

/** Table columns; `a.b` reads a nested field. */
export function columns(keys: readonly string[]): Column[] {
  return keys.map((key) =>
    key.includes('.')
      ? {
          key,
          get: (row: unknown) =>
            key.split('.').reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), row),
        }
      : { key },
  );
}

/** `--all` / `--limit N` from commander's options. */
export function pageFlags(flags: Record<string, unknown>): { all: boolean; limit?: number } {
  const raw = flags.limit;
  if (raw === undefined) return { all: Boolean(flags.all) };
  const text = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : JSON.stringify(raw);
  if (!/^\d+$/.test(text) || Number(raw) < 1)
    throw new ValidationError('--limit', `"${text}" is not a positive integer`, 'give a number such as --limit 50, or --all');
  if (flags.all) throw new UsageError('--all and --limit cannot be used together', { hint: 'use --all for everything, or --limit N for at most N records' });
  return { all: false, limit: Number(raw) };
}

/**
 * Takes over Ctrl-C/SIGTERM for a long verb (it watches `ctx.abort.signal`); the context's cleanup
 * destroys the connection pool after an interrupt, so a request in flight does not hold the exit.
 */
export function handleInterrupts(ctx: Context): Promise<AbortSignal> {
  ctx.handlesInterrupt = true;
  return Promise.resolve(ctx.abort.signal);
}

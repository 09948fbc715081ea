import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { Column, CommandResult } from '../../core/output.js';
import { ADMIN, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './events-list.spec.js';

/** A security event as the console API lists it: the fields its table reads. */
interface EventRow {
  last_error?: string | null;
  last_status?: number | null;
}

export const EVENT_COLUMNS: Column<EventRow>[] = [
  { key: 'jti' },
  { key: 'event' },
  { key: 'subject' },
  { key: 'client_id', header: 'client id' },
  { key: 'status' },
  { key: 'attempts' },
  { key: 'last', get: (e) => e.last_error ?? (e.last_status ? `HTTP ${e.last_status}` : '') },
  { key: 'created_at', header: 'created' },
];

const STATUSES = ['pending', 'delivered', 'rejected'];

/** The SETs the mock has sent or still tries to send, with their delivery status. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (opts.status && !STATUSES.includes(opts.status)) throw new ValidationError('--status', `"${opts.status}" is not a delivery status`, STATUSES.join(', '));
  const api = await consoleApi(ctx);
  const { events } = await api.get<{ events: unknown[] }>(`${ADMIN}/events`, { status: opts.status, set: opts.withSet ? 'true' : undefined });
  return { data: events, columns: EVENT_COLUMNS };
}

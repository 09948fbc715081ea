import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { EVENT_KINDS } from '@opsctl/mock/console';
import { ADMIN, consoleApi } from './lib/clients-shared.js';
import { EVENT_COLUMNS } from './events-list.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './events-trigger.spec.js';

/** Something happens to an account; the mock sends the SETs (first attempt now, retries in the background). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (!(EVENT_KINDS as readonly string[]).includes(opts.event))
    throw new ValidationError('event', `"${opts.event}" is not an event kind`, `one of ${EVENT_KINDS.join(', ')}`);
  if (opts.event === 'token-revoked' && !opts.clientId)
    throw new ValidationError('--client-id', 'is required for token-revoked: the client whose refresh tokens the user revokes');
  if (opts.reason !== undefined && (opts.event !== 'account-disabled' || !['hijacking', 'bulk-account'].includes(opts.reason))) {
    throw new ValidationError(
      '--reason',
      opts.event === 'account-disabled' ? `"${opts.reason}" is not a reason` : 'is only for account-disabled',
      'hijacking or bulk-account',
    );
  }
  const api = await consoleApi(ctx);
  const out = await api.post<{ events: Array<{ status: string }> }>(`${ADMIN}/events`, {
    event: opts.event,
    user: opts.user,
    client_id: opts.clientId,
    reason: opts.reason,
  });
  const n = out.events.length;
  const delivered = out.events.filter((e) => e.status === 'delivered').length;
  const message =
    n === 0
      ? `${opts.event} for ${opts.user}: no receiver listens for it (opsctl mock events receivers add --url URL --client-id ID)`
      : `${opts.event} for ${opts.user}: ${n} SET(s), ${delivered} delivered${n > delivered ? `, ${n - delivered} not yet (retried until acknowledged; see opsctl mock events list)` : ''}`;
  return { data: out.events, columns: EVENT_COLUMNS, message };
}

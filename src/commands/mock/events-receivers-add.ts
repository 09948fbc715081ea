import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { EVENT_KINDS } from '@opsctl/mock/console';
import { ADMIN, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './events-receivers-add.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  let u: URL;
  try {
    u = new URL(opts.url);
  } catch {
    throw new ValidationError('--url', `"${opts.url}" is not a URL`, 'e.g. https://app.example.com/secevents');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ValidationError('--url', `${u.protocol} is not http: or https:`);
  if (u.username || u.password) throw new ValidationError('--url', 'must not carry credentials (user:password@)', 'they would show in every event listing');
  const events = (opts.events ?? []).flatMap((e) => e.split(',')).filter(Boolean);
  const unknown = events.find((e) => !(EVENT_KINDS as readonly string[]).includes(e));
  if (unknown) throw new ValidationError('--events', `"${unknown}" is not an event kind`, `one of ${EVENT_KINDS.join(', ')}`);
  const api = await consoleApi(ctx);
  const r = await api.post<{ id: string }>(`${ADMIN}/events/receivers`, {
    url: opts.url,
    client_id: opts.clientId,
    events: events.length ? events : undefined,
  });
  return { data: r, message: `receiver ${r.id} added: SETs for ${opts.clientId}'s users go to ${opts.url}` };
}

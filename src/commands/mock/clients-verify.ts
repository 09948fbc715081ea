import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '../../context.js';
import { InterruptedError, OpsError, ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { durationFlag } from '../../core/duration.js';
import { clientPath, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-verify.spec.js';

/**
 * Ownership verification of a mobile A or extension client, as `account`. Access just granted on the store
 * listing takes a while to be seen (the seed: "allow a few minutes"): the console answers 409 with a
 * retry_after, and opsctl tries again then, with a countdown, for up to --wait; Ctrl-C stops it (exit 130).
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (!/^[^@\s]+@[^@\s]+$/.test(opts.account)) throw new ValidationError('--account', `"${opts.account}" is not an e-mail address`);
  // "5m", "90s", "0" (no retry)
  const budget = durationFlag('--wait', opts.wait, { bare: 's' });
  const api = await consoleApi(ctx);
  ctx.handlesInterrupt = true;
  const started = ctx.now();
  let progress: ReturnType<Context['io']['progress']> | undefined;
  for (let attempt = 1; ; attempt++) {
    const res = await api.request<{ retry_after?: number; error_description?: string }>({
      method: 'POST',
      path: `${clientPath(opts.clientId)}/verify-ownership`,
      json: { account: opts.account },
      okStatuses: [409],
    });
    if (res.status !== 409) {
      progress?.succeed(`verified on attempt ${attempt}`);
      return { data: res.data, message: `ownership of ${opts.clientId} verified by ${opts.account}` };
    }
    const why = res.data?.error_description ?? 'ownership not verified';
    const retryAfter = typeof res.data?.retry_after === 'number' ? res.data.retry_after : undefined;
    const left = budget - (ctx.now() - started);
    if (retryAfter === undefined || retryAfter * 1000 > left) {
      progress?.fail();
      throw new OpsError(`${opts.clientId}: ${why}`, 1, {
        code: 'ownership_not_verified',
        hint:
          retryAfter === undefined
            ? 'fix the store listing (opsctl mock clients get shows the problem), then verify again'
            : `access granted on the store takes a while to be seen: run the same command again in ${retryAfter} s, or give it more time with --wait`,
      });
    }
    progress ??= ctx.io.progress(`waiting for the store's access to reach verification`);
    for (let s = retryAfter; s > 0; s--) {
      progress.update(`not visible yet: trying again in ${s} s (attempt ${attempt + 1}; Ctrl-C stops)`);
      try {
        await sleep(1000, undefined, { signal: ctx.abort.signal });
      } catch {
        progress.fail('stopped');
        throw new InterruptedError(`ownership verification of ${opts.clientId} stopped while waiting; nothing changed`);
      }
    }
  }
}

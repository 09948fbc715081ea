import type { Context } from '../../context.js';
import { browserDecision } from '../../core/browser.js';
import { OpsError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

/** `--web` where no browser can open the page: exit 1, the address on stdout for copying (in the error with --json). */
export class NoBrowserError extends OpsError {
  constructor(
    readonly url: string,
    what: string,
    reason: string,
  ) {
    super(`no browser can open the page of ${what} here: ${reason}`, 1, {
      code: 'no_browser',
      hint: `open it yourself: ${url}   (or set BROWSER to a program that opens it, e.g. BROWSER=w3m)`,
    });
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), url: this.url };
  }
}

/**
 * gh's `--web`: the page opens in the system browser and stderr says which. Where nothing can open it
 * (no display, an SSH session or CI, as `opsctl login` decides: core/browser.ts; or no opener to run)
 * the command fails (exit 1) with the address on stdout for copying, rather than claiming to open it.
 */
export async function openWeb(ctx: Context, url: string, what: string): Promise<CommandResult> {
  const decision = browserDecision(ctx.env);
  if (decision.open) {
    ctx.io.err(`Opening ${url} in your browser (${what}).`);
    if (await ctx.openBrowser(url)) return { data: { url, opened: true }, text: '' };
  }
  if (!ctx.jsonOutput) ctx.io.out(ctx.io.safeOut(url));
  throw new NoBrowserError(url, what, decision.reason ?? 'no opener could be started (xdg-open, open or start)');
}

import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';

/**
 * gh's `--web`: the page opens in the system browser and stderr says which; where no browser can be
 * opened (SSH, no display, CI) the URL is printed on stdout instead, and the command still succeeds.
 */
export async function openWeb(ctx: Context, url: string, what: string): Promise<CommandResult> {
  ctx.io.err(`Opening ${url} in your browser (${what}).`);
  if (await ctx.openBrowser(url)) return { data: { url, opened: true }, text: '' };
  ctx.io.err('No browser could be opened here: the address is below.');
  return { data: { url, opened: false }, text: url };
}

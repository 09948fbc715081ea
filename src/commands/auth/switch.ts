import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { whyNoPrompt } from '../../core/no-prompt.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './switch.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `opsctl auth switch [ACCOUNT]`: makes another signed-in account the active one (a picker on a terminal). */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const { listAccounts, switchAccount, unknownAccount } = await import('../../auth/accounts.js');
  const profile = await ctx.profileName();
  const { accounts, active } = await listAccounts(ctx, profile);
  if (accounts.length === 0) await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
  let name = opts.account;
  if (name === undefined) {
    if (accounts.length === 0) throw unknownAccount(profile, '(any)', accounts);
    if (accounts.length === 1)
      return {
        data: { profile, active: active ?? null, changed: false },
        text: '',
        message: `${active} is the only account on profile ${profile}: nothing to switch`,
      };
    if (!ctx.io.canPrompt({ noInput: ctx.noInput })) {
      throw new UsageError(`auth switch: name the ACCOUNT to make active (${whyNoPrompt(ctx)})`, {
        code: 'account_required',
        field: 'ACCOUNT',
        hint: `run: opsctl auth switch ACCOUNT   (accounts on profile ${profile}: ${accounts.map((a) => a.account).join(', ')})`,
      });
    }
    const prompter = await ctx.prompter();
    if (!prompter.select)
      throw new UsageError('auth switch: this prompter cannot show a picker', { field: 'ACCOUNT', hint: 'run: opsctl auth switch ACCOUNT' });
    name = await prompter.select(`Switch the active account of profile ${profile} to`, {
      flag: 'ACCOUNT',
      choices: accounts.map((a) => ({ value: a.account, name: `${a.account}${a.account === active ? ' (active)' : ''}` })),
      default: accounts.find((a) => a.account !== active)?.account,
    });
  }
  if (!accounts.some((a) => a.account === name)) throw unknownAccount(profile, name, accounts);
  await switchAccount(ctx, profile, name);
  return { data: { profile, active: name, changed: name !== active }, text: '', message: `active account of profile ${profile}: ${name}` };
}

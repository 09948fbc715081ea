import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { renamedVerb } from '../lib/renamed.js';
import { addGroup, defineGroup } from '../spec.js';
import { spec as list } from './list.spec.js';
import { spec as forgetToken } from './forget-token.spec.js';
import { spec as refresh } from './refresh.spec.js';
import { spec as status } from './status.spec.js';
import { spec as storeToken } from './store-token.spec.js';
import { spec as switchAccount } from './switch.spec.js';
import { spec as token } from './token.spec.js';

/** `opsctl auth …`: credentials. Its verbs, in --help order. */
export const noun = defineGroup({
  name: 'auth',
  summary: NOUN_SUMMARIES.auth,
  verbs: [
    status,
    list,
    switchAccount,
    token,
    refresh,
    storeToken,
    forgetToken,
    // the names before 0.2: `auth login` stored a token and `auth logout` forgot it, while `opsctl login` signs in
    renamedVerb(storeToken, 'login', 'auth login', 'auth store-token'),
    renamedVerb(forgetToken, 'logout', 'auth logout', 'auth forget-token'),
  ],
});

export function register(program: Command, ctx: Context): void {
  addGroup(program, ctx, noun);
}

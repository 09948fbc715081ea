import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addGroup, defineGroup } from '../spec.js';
import { spec as list } from './list.spec.js';
import { spec as login } from './login.spec.js';
import { spec as logout } from './logout.spec.js';
import { spec as refresh } from './refresh.spec.js';
import { spec as status } from './status.spec.js';
import { spec as switchAccount } from './switch.spec.js';
import { spec as token } from './token.spec.js';

/** `opsctl auth …`: credentials. Its verbs, in --help order. */
export const noun = defineGroup({ name: 'auth', summary: NOUN_SUMMARIES.auth, verbs: [login, logout, status, list, switchAccount, token, refresh] });

export function register(program: Command, ctx: Context): void {
  addGroup(program, ctx, noun);
}

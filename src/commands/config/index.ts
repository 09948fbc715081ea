import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addGroup, defineGroup } from '../spec.js';
import { spec as get } from './get.spec.js';
import { spec as list } from './list.spec.js';
import { spec as set } from './set.spec.js';
import { spec as unset } from './unset.spec.js';

/** `opsctl config …`: the profiles' settings. Its verbs, in --help order. */
export const noun = defineGroup({ name: 'config', summary: NOUN_SUMMARIES.config, verbs: [get, set, unset, list] });

export function register(program: Command, ctx: Context): void {
  addGroup(program, ctx, noun);
}

import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerb } from '../spec.js';
import { spec } from './help.spec.js';

export function register(program: Command, ctx: Context): void {
  addVerb(program, ctx, spec);
}

import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerb } from '../spec.js';
import { spec as complete } from './complete.spec.js';
import { spec } from './completion.spec.js';

export function register(program: Command, ctx: Context): void {
  addVerb(program, ctx, spec);
}

/** `opsctl __complete SOURCE [PREFIX]`: hidden; what the completion scripts call for names the service knows. */
export function registerComplete(program: Command, ctx: Context): void {
  addVerb(program, ctx, complete);
}

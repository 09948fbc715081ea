import type { ExtraVerb } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';

/** `tracker key-results list`: its row (the `key-results` handler) gives the summary and example. */
export const keyResultsSpec = (extra: ExtraVerb) =>
  defineVerb({
    name: 'list',
    aliases: ['ls'],
    summary: extra.description,
    flags: { objective: { type: 'string', value: 'name|id', help: 'the objective, by its exact name (any case) or id', required: true } },
    examples: extra.example ? [extra.example] : [],
    load: (): RunModule => import('./key-results.js'),
  });

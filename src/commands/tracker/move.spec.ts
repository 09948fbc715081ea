import type { ExtraVerb } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';

/** `tracker stories move`: its row (the `move` handler) gives the summary and example. */
export const moveSpec = (extra: ExtraVerb) =>
  defineVerb({
    name: 'move',
    args: [{ name: '<story-id>', field: 'id' }],
    summary: extra.description,
    flags: { state: { type: 'string', value: 'name', help: 'the workflow state, by its exact name (any case) or its id', required: true } },
    examples: extra.example ? [extra.example] : [],
    load: (): RunModule => import('./move.js'),
  });

import type { ExtraVerb } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';

/** `tracker files upload`: its row (the `upload` handler) gives the summary and example. */
export const uploadSpec = (extra: ExtraVerb) =>
  defineVerb({
    name: 'upload',
    args: ['<files...>'],
    summary: extra.description,
    flags: { story: { type: 'string', value: 'id', help: 'attach the files to this story' } },
    examples: extra.example ? [extra.example] : [],
    load: (): RunModule => import('./upload.js'),
  });

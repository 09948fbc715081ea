import { defineVerb, type RunModule } from '../spec.js';
import { COPY_MODES } from '../../labels/schema.js';
import { admin, kebab, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'copy-mode',
  args: [LABEL_ARG, '<mode>'],
  summary: `how the label is copied with a Drive item: ${COPY_MODES.map(kebab).join(' | ')} (not revisioned)`,
  flags: { admin },
  examples: ['opsctl labels copy-mode 0a1b2c always-copy'],
  load: (): RunModule => import('./copy-mode.js'),
});

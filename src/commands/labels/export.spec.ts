import { defineVerb, type RunModule } from '../spec.js';
import { ADMIN_HELP } from './lib/flags.js';

export const spec = defineVerb({
  name: 'export',
  args: ['[label]'],
  summary: 'print a label (or --all you edit) in the apply-file format: YAML, or JSON with --json; `export | apply` changes nothing here and copies elsewhere',
  flags: {
    all: { type: 'boolean', help: 'every label you can edit (a list)' },
    admin: { type: 'boolean', help: ADMIN_HELP },
  },
  examples: [
    'opsctl labels export 0a1b2c > sensitivity.yaml',
    'opsctl labels export --all > labels.yaml',
    'opsctl labels export --all | opsctl --profile other labels apply -f - --dry-run',
  ],
  load: (): RunModule => import('./export.js'),
});

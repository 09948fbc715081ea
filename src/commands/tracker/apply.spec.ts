import type { ExtraVerb, ResourceSpec } from '../../tracker/resources.js';
import { CONFIRM_HELP, EXIT_CODE_FLAG } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { STRICT_FLAG } from './lib/verb-flags.js';

/** `tracker <resource> apply`: from a row with the `apply` handler (bound to the resource). */
export const applySpec = (row: ResourceSpec, extra: ExtraVerb) =>
  defineVerb({
    name: 'apply',
    summary: extra.description,
    flags: {
      file: { type: 'string', short: 'f', value: 'path|-', help: 'the desired state: a YAML or JSON file (- reads stdin)', required: true },
      dryRun: { type: 'boolean', help: 'print the plan and send nothing' },
      exitCode: EXIT_CODE_FLAG,
      ...STRICT_FLAG,
      prune: { type: 'boolean', help: `delete ${row.name} that the file does not list (${CONFIRM_HELP})` },
    },
    bound: { resource: row.name },
    examples: extra.example ? [extra.example, `opsctl tracker ${row.name} apply -f ${row.name}.yaml --prune`] : [],
    load: (): RunModule => import('./apply.js'),
  });

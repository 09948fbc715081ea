import { EXIT_CODE_FLAG } from '../action.js';
import type { ExtraVerb } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';

/** `tracker stories import`: its row (the `import` handler) gives the summary and example. */
export const importSpec = (extra: ExtraVerb) =>
  defineVerb({
    name: 'import',
    summary: extra.description,
    flags: {
      file: { type: 'string', short: 'f', value: 'path|-', help: 'stories as YAML, JSON or CSV (- reads stdin; CSV needs --format csv)', required: true },
      format: { type: 'string', value: 'format', help: 'yaml, json or csv (default: from the file name)' },
      dryRun: { type: 'boolean', help: 'print the plan and send nothing' },
      exitCode: EXIT_CODE_FLAG,
    },
    examples: extra.example ? [extra.example, 'opsctl tracker stories import -f stories.yaml'] : [],
    load: (): RunModule => import('./import.js'),
  });

import { EXIT_CODE_FLAG } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { ADMIN_HELP, CONFIRM_HELP } from './lib/flags.js';

export const spec = defineVerb({
  name: 'apply',
  summary: `make labels match a file (YAML or JSON; one label or a list, or \`labels get/list --json\` output): title, description, copy mode, apps, disabled state, fields, choices (renamed_from keeps their ids), permissions (removing permissions or deleting fields/choices ${CONFIRM_HELP})`,
  flags: {
    file: { type: 'string', short: 'f', value: 'path|-', help: 'the label file: YAML or JSON (- reads stdin)', required: true },
    dryRun: { type: 'boolean', help: 'print the plan and send nothing' },
    exitCode: EXIT_CODE_FLAG,
    publish: { type: 'boolean', help: 'publish the result when it has unpublished changes' },
    admin: { type: 'boolean', help: `${ADMIN_HELP} (on by itself for labelType: ADMIN)` },
  },
  examples: [
    'opsctl labels apply -f sensitivity.yaml --dry-run',
    'opsctl labels apply -f sensitivity.yaml --publish',
    'opsctl labels get 0a1b2c --json | opsctl labels apply -f - --dry-run',
  ],
  load: (): RunModule => import('./apply.js'),
});

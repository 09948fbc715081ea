import type { ExtraVerb, ResourceSpec } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';

/** `tracker <resource> export`: from a row with the `export` handler (bound to the resource). */
export const exportSpec = (row: ResourceSpec, extra: ExtraVerb) =>
  defineVerb({
    name: 'export',
    summary: extra.description,
    bound: { resource: row.name },
    examples: extra.example ? [extra.example, `opsctl tracker ${row.name} export --profile staging | opsctl tracker ${row.name} apply -f - --dry-run`] : [],
    load: (): RunModule => import('./export.js'),
  });

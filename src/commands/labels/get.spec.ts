import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'get',
  // gh's word for it (gh issue view 12 --web)
  aliases: ['view'],
  args: [LABEL_ARG],
  summary: 'show a label (latest revision unless the name says @published or @REV)',
  flags: {
    admin,
    web: { type: 'boolean', help: "open the label's page in the browser instead (the labels manager; the mock serves one too)" },
  },
  examples: ['opsctl labels get 0a1b2c', 'opsctl labels get labels/0a1b2c@published --json', 'opsctl labels view 0a1b2c --web'],
  load: (): RunModule => import('./get.js'),
});

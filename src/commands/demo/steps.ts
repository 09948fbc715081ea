/** One command of the tour. `argv` may depend on what earlier steps captured (e.g. an id). */
export interface DemoStep {
  title: string;
  argv: string[] | ((vars: Record<string, string>) => string[]);
  stdin?: string;
  /** Pull values out of the step's stdout for later steps. */
  capture?: (stdout: string, vars: Record<string, string>) => void;
  /** Exit codes that count as success (default [0]). */
  expect?: number[];
}

export interface DemoSection {
  job: string;
  steps: DemoStep[];
}

/** The tour, one section per job. Each feature adds its own section here. */
export const DEMO_SECTIONS: DemoSection[] = [
  {
    job: 'tracker labels over HTTP against the embedded mock',
    steps: [
      { title: 'create a label', argv: ['tracker', 'labels', 'create', '--name', 'demo-bug', '--color', '#d73a4a', '--description', 'Something is broken', '--json', 'id,name,color'], capture: (out, v) => void (v.labelId = String(JSON.parse(out).id)) },
      { title: 'create another', argv: ['tracker', 'labels', 'create', '--name', 'demo-feature', '--color', '#0e8a16'] },
      { title: 'list them (TSV when piped)', argv: ['tracker', 'labels', 'list'] },
      { title: 'rename and archive the first', argv: (v) => ['tracker', 'labels', 'update', v.labelId, '--name', 'demo-defect', '--archived'] },
      { title: 'show it with stats', argv: (v) => ['tracker', 'labels', 'get', v.labelId, '--json', 'id,name,archived,stats'] },
      { title: 'a bad colour is refused before sending (exit 2)', argv: ['tracker', 'labels', 'create', '--name', 'x', '--color', 'red'], expect: [2] },
      { title: 'delete it', argv: (v) => ['tracker', 'labels', 'delete', v.labelId, '--yes'] },
    ],
  },
];

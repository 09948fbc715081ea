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
  {
    job: 'kv: a safe rolling upgrade 3.2 → 3.3 of a local sandbox cluster',
    steps: [
      { title: 'start a 3-member sandbox of simulated 3.2 members', argv: ['kv', 'sandbox', 'up', '--members', '3', '--kv-version', '3.2'] },
      { title: 'write a key through the gateway', argv: ['kv', 'put', 'demo/greeting', 'hello from 3.2'] },
      { title: 'the plan: followers first, the leader last', argv: ['kv', 'upgrade', '--to', '3.3', '--dry-run'] },
      { title: 'upgrade, one member at a time (snapshot, stop, start 3.3, wait healthy)', argv: ['kv', 'upgrade', '--to', '3.3', '--poll-interval', '100ms'] },
      { title: 'every member and the cluster report 3.3', argv: ['kv', 'status'] },
      { title: 'the key written before is still there', argv: ['kv', 'get', 'demo/greeting'] },
      { title: 'stop the sandbox', argv: ['kv', 'sandbox', 'down'] },
    ],
  },
];

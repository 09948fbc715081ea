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
    job: 'tracker: declarative apply, epics with comments, and search',
    steps: [
      {
        title: 'plan a labels file without writing (--dry-run, the file on stdin)',
        argv: ['tracker', 'labels', 'apply', '-f', '-', '--dry-run'],
        stdin: 'labels:\n  - name: demo-p1\n    color: "#b60205"\n    description: Fix now\n  - name: demo-p2\n    color: "#fbca04"\n  - name: demo-legacy\n    archived: true\n',
      },
      {
        title: 'apply it: 1 list + only the writes the plan needs',
        argv: ['tracker', 'labels', 'apply', '-f', '-'],
        stdin: 'labels:\n  - name: demo-p1\n    color: "#b60205"\n    description: Fix now\n  - name: demo-p2\n    color: "#fbca04"\n  - name: demo-legacy\n    archived: true\n',
      },
      {
        title: 'apply it again: nothing to do',
        argv: ['tracker', 'labels', 'apply', '-f', '-'],
        stdin: 'labels:\n  - name: demo-p1\n    color: "#b60205"\n    description: Fix now\n  - name: demo-p2\n    color: "#fbca04"\n  - name: demo-legacy\n    archived: true\n',
      },
      { title: 'create an epic', argv: ['tracker', 'epics', 'create', '--name', 'Demo launch', '--state', 'in progress', '--json', 'id,name,state'], capture: (out, v) => void (v.epicId = String(JSON.parse(out).id)) },
      { title: 'comment on it', argv: (v) => ['tracker', 'epics', 'comment-add', v.epicId, '--text', 'Kick-off on Monday', '--json', 'id,text'] },
      { title: 'create a story in the epic', argv: (v) => ['tracker', 'stories', 'create', '--name', 'Demo launch checklist', '--epic-id', v.epicId, '--estimate', '2', '--json', 'id,name,epic_id'] },
      { title: 'search stories (every page with --all)', argv: ['tracker', 'search', 'stories', '--query', 'demo launch', '--all', '--json', 'id,name,epic_id'] },
      { title: 'search epics', argv: ['tracker', 'search', 'epics', '--query', 'demo', '--json', 'id,name,state'] },
    ],
  },
];

import { LADDER_BOTTOM, LADDER_TOP, ladderWords } from '@opsctl/shared/etcd-ladder.js';

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

/** The label file the label-service section applies (the README shows the same format). */
export const DEMO_LABEL_FILE = `title: Sensitivity
description: How secret a document is
fields:
  - name: Level
    type: selection
    required: true
    choices: [Public, Internal, {name: Confidential, description: Need-to-know only}]
  - name: Review date
    type: date
  - name: Owners
    type: user
    list: 3
permissions:
  - {audience: audiences/default, role: APPLIER}
  - {email: auditor@example.com, role: READER}
`;

/** The value at `path` in the JSON a step printed, as text (a later step's argument). */
function captured(out: string, ...path: (string | number)[]): string {
  let value: unknown = JSON.parse(out);
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string | number, unknown>)[key] : undefined;
  return String(value);
}

/**
 * What an earlier step of the section captured, for a later step's argv. The steps of a section run in
 * order and a section stops at its first failed step, so the value is there; a step that names a value
 * no earlier step captures is a mistake in this table.
 */
function need(vars: Record<string, string>, name: string): string {
  const value = vars[name];
  if (value === undefined) throw new Error(`demo: no earlier step captured ${name}`);
  return value;
}

/** The first tab-separated column of a step's output (a list prints TSV when piped): the first row's id. */
function firstColumn(out: string): string {
  const tab = out.indexOf('\t');
  return tab === -1 ? out : out.slice(0, tab);
}

/** The tour, one section per job. Each feature adds its own section here. */
export const DEMO_SECTIONS: DemoSection[] = [
  {
    job: 'tracker labels over HTTP against the embedded mock',
    steps: [
      {
        title: 'create a label',
        argv: ['tracker', 'labels', 'create', '--name', 'demo-bug', '--color', '#d73a4a', '--description', 'Something is broken', '--json=id,name,color'],
        capture: (out, v) => void (v.labelId = captured(out, 'id')),
      },
      { title: 'create another', argv: ['tracker', 'labels', 'create', '--name', 'demo-feature', '--color', '#0e8a16'] },
      { title: 'list them (TSV when piped)', argv: ['tracker', 'labels', 'list'] },
      { title: 'rename and archive the first', argv: (v) => ['tracker', 'labels', 'update', need(v, 'labelId'), '--name', 'demo-defect', '--archived'] },
      { title: 'show it with stats', argv: (v) => ['tracker', 'labels', 'get', need(v, 'labelId'), '--json=id,name,archived,stats'] },
      { title: 'a bad colour is refused before sending (exit 2)', argv: ['tracker', 'labels', 'create', '--name', 'x', '--color', 'red'], expect: [2] },
      { title: 'delete it', argv: (v) => ['tracker', 'labels', 'delete', need(v, 'labelId'), '--yes'] },
    ],
  },
  {
    job: 'tracker: declarative apply, epics with comments, and search',
    steps: [
      {
        title: 'plan a labels file without writing (--dry-run, the file on stdin)',
        argv: ['tracker', 'labels', 'apply', '-f', '-', '--dry-run'],
        stdin:
          'labels:\n  - name: demo-p1\n    color: "#b60205"\n    description: Fix now\n  - name: demo-p2\n    color: "#fbca04"\n  - name: demo-legacy\n    archived: true\n',
      },
      {
        title: 'apply it: 1 list + only the writes the plan needs',
        argv: ['tracker', 'labels', 'apply', '-f', '-'],
        stdin:
          'labels:\n  - name: demo-p1\n    color: "#b60205"\n    description: Fix now\n  - name: demo-p2\n    color: "#fbca04"\n  - name: demo-legacy\n    archived: true\n',
      },
      {
        title: 'apply it again: nothing to do',
        argv: ['tracker', 'labels', 'apply', '-f', '-'],
        stdin:
          'labels:\n  - name: demo-p1\n    color: "#b60205"\n    description: Fix now\n  - name: demo-p2\n    color: "#fbca04"\n  - name: demo-legacy\n    archived: true\n',
      },
      {
        title: 'create an epic',
        argv: ['tracker', 'epics', 'create', '--name', 'Demo launch', '--state', 'in progress', '--json=id,name,state'],
        capture: (out, v) => void (v.epicId = captured(out, 'id')),
      },
      { title: 'comment on it', argv: (v) => ['tracker', 'epics', 'comment-add', need(v, 'epicId'), '--text', 'Kick-off on Monday', '--json=id,text'] },
      {
        title: 'create a story in the epic',
        argv: (v) => [
          'tracker',
          'stories',
          'create',
          '--name',
          'Demo launch checklist',
          '--epic-id',
          need(v, 'epicId'),
          '--estimate',
          '2',
          '--json=id,name,epic_id',
        ],
      },
      { title: 'search stories (every page with --all)', argv: ['tracker', 'search', 'stories', '--query', 'demo launch', '--all', '--json=id,name,epic_id'] },
      { title: 'search epics', argv: ['tracker', 'search', 'epics', '--query', 'demo', '--json=id,name,state'] },
    ],
  },
  {
    job: 'tracker: a story moves through its workflow, and the label stats follow',
    steps: [
      {
        title: 'the story workflow and its states',
        argv: ['tracker', 'workflows', 'list', '--json=id,name,default_state_id'],
        capture: (out, v) => void (v.workflowId = captured(out, 0, 'id')),
      },
      { title: 'its states, with how many stories each holds', argv: (v) => ['tracker', 'workflows', 'states', need(v, 'workflowId')] },
      {
        title: 'create a 3-point story with the label demo-flow (the full Story comes back)',
        argv: [
          'tracker',
          'stories',
          'create',
          '--data',
          '{"name":"Demo: ship the search box","estimate":3,"labels":[{"name":"demo-flow","color":"#1d76db"}]}',
          '--json=id,name,workflow_state_id,started,completed,labels',
        ],
        capture: (out, v) => {
          v.storyId = captured(out, 'id');
          v.flowLabelId = captured(out, 'labels', 0, 'id');
        },
      },
      { title: 'demo-flow counts it as unstarted', argv: (v) => ['tracker', 'labels', 'get', need(v, 'flowLabelId'), '--json=name,stats'] },
      {
        title: 'move it by state name',
        argv: (v) => ['tracker', 'stories', 'move', need(v, 'storyId'), '--state', 'In Progress', '--json=id,workflow_state_id,started,started_at'],
      },
      {
        title: 'demo-flow now counts it (and its 3 points) in progress',
        argv: (v) => ['tracker', 'labels', 'get', need(v, 'flowLabelId'), '--json=name,stats'],
      },
      {
        title: 'a checklist: add a task and tick it',
        argv: (v) => ['tracker', 'stories', 'task-add', need(v, 'storyId'), '--description', 'Write the test', '--json=id,description,complete'],
        capture: (out, v) => void (v.taskId = captured(out, 'id')),
      },
      { title: 'tick it', argv: (v) => ['tracker', 'stories', 'task-check', need(v, 'storyId'), need(v, 'taskId'), '--json=id,complete,completed_at'] },
      {
        title: 'an unknown state is refused, listing the choices (exit 2, nothing sent)',
        argv: (v) => ['tracker', 'stories', 'move', need(v, 'storyId'), '--state', 'Shipped'],
        expect: [2],
      },
      {
        title: 'finish it',
        argv: (v) => ['tracker', 'stories', 'move', need(v, 'storyId'), '--state', 'done', '--json=id,started,completed,completed_at,cycle_time'],
      },
      { title: 'demo-flow: completed, with its points', argv: (v) => ['tracker', 'labels', 'get', need(v, 'flowLabelId'), '--json=name,stats'] },
      { title: 'the story history', argv: (v) => ['tracker', 'stories', 'history', need(v, 'storyId')] },
      {
        title: 'import stories from CSV (bulk, idempotent by external_id)',
        argv: ['tracker', 'stories', 'import', '-f', '-', '--format', 'csv'],
        stdin:
          'external_id,name,story_type,estimate,labels,state\nDEMO-1,Search: index titles,feature,2,demo-flow,To Do\nDEMO-2,"Search: fix ""no results"" page",bug,1,demo-flow,In Progress\n',
      },
      {
        title: 'import it again: every story exists, nothing is written',
        argv: ['tracker', 'stories', 'import', '-f', '-', '--format', 'csv'],
        stdin:
          'external_id,name,story_type,estimate,labels,state\nDEMO-1,Search: index titles,feature,2,demo-flow,To Do\nDEMO-2,"Search: fix ""no results"" page",bug,1,demo-flow,In Progress\n',
      },
      { title: 'demo-flow after the import', argv: (v) => ['tracker', 'labels', 'get', need(v, 'flowLabelId'), '--json=name,stats'] },
    ],
  },
  {
    job: 'sign in with OAuth 2.0 + PKCE (no browser in the demo: opsctl submits the mock consent form itself over HTTP)',
    steps: [
      {
        title: 'sign in as alice (--consent-as plays the browser against the local mock only)',
        argv: ['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'media.readonly', 'drive.labels'],
      },
      { title: 'who am I, what may I do, where is the token', argv: ['auth', 'status'] },
      { title: 'call the data API with the stored token', argv: ['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'] },
    ],
  },
  {
    // Needs the signed-in user of the section above (same config dir, scope drive.labels).
    job: 'label service: a label schema kept in a file, applied and published',
    steps: [
      { title: 'what may I do? (users/me/capabilities)', argv: ['labels', 'capabilities'] },
      { title: 'the structural limits a file must respect', argv: ['labels', 'limits'] },
      { title: 'plan the label file without sending anything', argv: ['labels', 'apply', '-f', '-', '--dry-run'], stdin: DEMO_LABEL_FILE },
      { title: 'apply it and publish: 1 create + 1 permission batch + 1 publish', argv: ['labels', 'apply', '-f', '-', '--publish'], stdin: DEMO_LABEL_FILE },
      { title: 'apply again: idempotent, nothing to send', argv: ['labels', 'apply', '-f', '-', '--publish'], stdin: DEMO_LABEL_FILE },
      {
        title: 'list labels: id, title, state, revision, unpublished changes, fields, type',
        argv: ['labels', 'list'],
        capture: (out, v) => void (v.labelsId = firstColumn(out)),
      },
      {
        title: 'add a choice: a new draft revision waits to be published',
        argv: (v) => ['labels', 'choices', 'add', need(v, 'labelsId'), 'Level', '--name', 'Secret'],
      },
      { title: 'publish it', argv: (v) => ['labels', 'publish', need(v, 'labelsId')] },
      { title: 'show the label', argv: (v) => ['labels', 'get', need(v, 'labelsId')] },
      { title: 'who may use it', argv: (v) => ['labels', 'permissions', 'list', need(v, 'labelsId')] },
      { title: 'a published label cannot be deleted (disable it first; exit 1)', argv: (v) => ['labels', 'delete', need(v, 'labelsId'), '--yes'], expect: [1] },
    ],
  },
  {
    job: 'sign out',
    steps: [
      { title: 'sign out: revoke on the server, forget locally', argv: ['logout'] },
      { title: 'the API now needs a sign-in again (exit 4)', argv: ['api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true'], expect: [4] },
    ],
  },
  {
    job: `kv: the upgrade ladder ${LADDER_BOTTOM} → ${LADDER_TOP} of a local sandbox cluster, one safe rolling upgrade per minor`,
    steps: [
      {
        title: 'start a 3-member sandbox of simulated 3.2 members (they answer as each etcd minor does)',
        argv: ['kv', 'sandbox', 'up', '--members', '3', '--version', LADDER_BOTTOM, '--heartbeat', '50ms'],
      },
      { title: 'write a key through the gateway', argv: ['kv', 'put', 'demo/greeting', `hello from ${LADDER_BOTTOM}`] },
      {
        title: "the plan: every hop, its members (followers first, the leader last) and its guide's checks",
        argv: ['kv', 'upgrade', '--to', LADDER_TOP, '--dry-run'],
      },
      {
        title: `climb the ladder: ${ladderWords()}, the cluster version confirmed after each hop`,
        argv: ['kv', 'upgrade', '--to', LADDER_TOP, '--yes', '--poll-interval', '50ms'],
      },
      { title: `every member and the cluster report ${LADDER_TOP}`, argv: ['kv', 'status'] },
      { title: 'the key written on 3.2 is still there', argv: ['kv', 'get', 'demo/greeting'] },
      { title: 'stop the sandbox', argv: ['kv', 'sandbox', 'down'] },
    ],
  },
];

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
    job: 'sign in with OAuth 2.0 + PKCE (no browser in the demo: opsctl submits the mock consent form itself over HTTP)',
    steps: [
      { title: 'sign in as alice (the hidden --consent-as plays the browser against the local mock only)', argv: ['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'media.readonly', 'drive.labels'] },
      { title: 'who am I, what may I do, where is the token', argv: ['auth', 'status'] },
      { title: 'call the data API with the stored token', argv: ['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'] },
      { title: 'sign out: revoke on the server, forget locally', argv: ['logout'] },
      { title: 'the API now needs a sign-in again (exit 4)', argv: ['api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true'], expect: [4] },
    ],
  },
];

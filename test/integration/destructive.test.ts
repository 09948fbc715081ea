import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Prompter } from '../../src/context.js';
import { runCli, tempConfigDir, type RunOptions } from '../helpers/cli.js';
import { mintToken } from '../helpers/labels.js';
import { startMock, trackerEnv, type TestState } from '../helpers/mock.js';

// One rule for every delete: ask on a terminal; need --yes without one (exit 2 naming it, nothing
// sent); --dry-run shows what would go and sends no write. Checked on several verbs of both services.
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;
let token: string;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'labels'] });
  await mock.service('labels');
  token = await mintToken(mock);
});
afterAll(async () => {
  await mock.close();
});
beforeEach(async () => {
  cfg = tempConfigDir();
  env = { ...trackerEnv(mock, cfg.dir), OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: token };
  await mock.store.write((s: TestState) => {
    s.labels.labels = [];
  });
  mock.requests.length = 0;
});
afterEach(() => cfg.cleanup());

const cli = (argv: string[], opts: RunOptions = {}) => runCli(argv, { env, ...opts });
const writes = () => mock.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
/** A terminal's answer: records the question, answers `yes`. */
const answering = (yes: boolean, asked: string[]): Prompter => ({
  confirm: async (message) => (asked.push(message), yes),
  input: async () => '',
  password: async (message) => {
    throw new Error(`no destructive verb asks for a password (asked: ${message})`);
  },
});

/** Each case: set-up returning the argv of the destructive verb, and how to tell the thing still exists. */
interface Case {
  name: string;
  setup(): Promise<string[]>;
  exists(): Promise<boolean>;
}

const cases: Case[] = [
  (() => {
    let id = 0;
    return {
      name: 'tracker epics delete',
      async setup() {
        id = (await cli(['tracker', 'epics', 'create', '--name', 'Doomed', '--json'])).json().id;
        return ['tracker', 'epics', 'delete', String(id)];
      },
      exists: async () => (await cli(['tracker', 'epics', 'list', '--json'])).json().some((e: any) => e.id === id),
    };
  })(),
  {
    name: 'tracker labels apply --prune',
    async setup() {
      await mock.store.write((s: TestState) => {
        s.tracker.labels = [];
      });
      await cli(['tracker', 'labels', 'create', '--name', 'doomed', '--json']);
      await cli(['tracker', 'labels', 'create', '--name', 'kept', '--json']);
      return ['tracker', 'labels', 'apply', '-f', '-', '--prune'];
    },
    exists: async () => (await cli(['tracker', 'labels', 'list', '--json'])).json().some((l: any) => l.name === 'doomed'),
  },
  {
    name: 'labels fields delete',
    async setup() {
      const id = (await cli(['labels', 'create', '--title', 'L', '--json'])).json().id;
      await cli(['labels', 'fields', 'add', id, '--name', 'Doomed', '--type', 'text']);
      return ['labels', 'fields', 'delete', id, 'Doomed'];
    },
    exists: async () => (await cli(['labels', 'list', '--json'])).json()[0].fields?.some((f: any) => f.properties.displayName === 'Doomed') ?? false,
  },
  {
    name: 'labels permissions remove',
    async setup() {
      const id = (await cli(['labels', 'create', '--title', 'P', '--json'])).json().id;
      await cli(['labels', 'permissions', 'add', id, 'doomed@example.com=READER']);
      return ['labels', 'permissions', 'remove', id, 'doomed@example.com'];
    },
    exists: async () => {
      const id = (await cli(['labels', 'list', '--json'])).json()[0].id;
      return (await cli(['labels', 'permissions', 'list', id, '--json'])).json().some((p: any) => p.email === 'doomed@example.com');
    },
  },
  {
    name: 'labels apply dropping a permission',
    async setup() {
      const id = (await cli(['labels', 'create', '--title', 'A', '--json'])).json().id;
      await cli(['labels', 'permissions', 'add', id, 'doomed@example.com=READER', 'kept@example.com=READER']);
      return ['labels', 'apply', '-f', '-'];
    },
    exists: async () => {
      const id = (await cli(['labels', 'list', '--json'])).json()[0].id;
      return (await cli(['labels', 'permissions', 'list', id, '--json'])).json().some((p: any) => p.email === 'doomed@example.com');
    },
  },
];

/** stdin of the apply cases: the file without the doomed thing. */
const STDIN: Record<string, string> = {
  'tracker labels apply --prune': 'labels:\n  - name: kept\n',
  'labels apply dropping a permission': 'title: A\npermissions:\n  - {email: kept@example.com, role: READER}\n',
};

describe.each(cases)('$name', (c) => {
  it('piped, without --yes: exit 2 naming --yes, nothing sent', async () => {
    const argv = await c.setup();
    mock.requests.length = 0;
    const r = await cli(argv, { stdin: STDIN[c.name] });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--yes');
    expect(r.stderr).toContain('needs confirmation');
    expect(writes()).toEqual([]);
    expect(await c.exists()).toBe(true);
  });

  it('--dry-run names what would go and sends no write', async () => {
    const argv = await c.setup();
    mock.requests.length = 0;
    const r = await cli([...argv, '--dry-run'], { stdin: STDIN[c.name] });
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/doomed/i);
    expect(writes()).toEqual([]);
    expect(await c.exists()).toBe(true);
  });

  it('on a terminal it asks: "no" changes nothing and exits 5 (declined), "yes" deletes', async () => {
    const argv = await c.setup();
    mock.requests.length = 0;
    const asked: string[] = [];
    const no = await cli(argv, { stdin: STDIN[c.name], prompter: answering(false, asked) });
    expect(no.code, no.stderr).toBe(5);
    expect(no.stderr).toContain('nothing changed');
    expect(asked).toHaveLength(1);
    expect(writes()).toEqual([]);
    expect(await c.exists()).toBe(true);
    const yes = await cli(argv, { stdin: STDIN[c.name], prompter: answering(true, asked) });
    expect(yes.code, yes.stderr).toBe(0);
    expect(await c.exists()).toBe(false);
  });

  it('--yes deletes without asking', async () => {
    const argv = await c.setup();
    const asked: string[] = [];
    const r = await cli([...argv, '--yes'], { stdin: STDIN[c.name], prompter: answering(false, asked) });
    expect(r.code, r.stderr).toBe(0);
    expect(asked).toEqual([]);
    expect(await c.exists()).toBe(false);
  });
});

it('--no-input on a terminal also needs --yes', async () => {
  const id = (await cli(['tracker', 'epics', 'create', '--name', 'Kept', '--json'])).json().id;
  mock.requests.length = 0;
  const r = await cli(['tracker', 'epics', 'delete', String(id), '--no-input'], { tty: true });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--yes');
  expect(writes()).toEqual([]);
});

import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';

/**
 * Every command example of README.md runs, as written, with the built binary, against the embedded
 * default (or the kv sandbox its own block starts), and exits with its documented code: a documented
 * example can never break again.
 *
 * What counts as an example: each line of a ```sh / ```console / ``` block that starts with `opsctl`
 * or `$ opsctl`. Each block runs in order, through /bin/sh (so quotes, `<` and `# comments` mean what
 * they mean to a reader), with `opsctl` on PATH being bin/opsctl.js, in a fresh OPSCTL_CONFIG_DIR and a
 * fresh working directory that holds the README's own YAML files (```yaml blocks whose first line is
 * `# NAME.yaml`) and the FIXTURES below. Lines that do not start with opsctl (npm, curl) are not
 * examples of opsctl, except where SUBSTITUTIONS says how the opsctl inside them is run.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Files the examples name that the README does not spell out. */
const FIXTURES: Record<string, string> = {
  'token.txt': 'trk_readme_example_token\n',
  'shot1.png': '\x89PNG\r\n\x1a\nfirst',
  'shot2.png': '\x89PNG\r\n\x1a\nsecond',
  'log.txt': 'a log line\n',
};

/**
 * The only examples not run, each because it needs something no test may use: a real external service
 * or a person at a browser. Keep this list short and say why.
 */
const SKIP: Record<string, string> = {
  'opsctl tracker labels list              # now against the real tracker':
    'the block above pointed the profile at the real https://api.app.shortcut.com',
  'opsctl login --profile google': 'real Google endpoints and a person at a browser',
};

type Run = (cmd: string) => Promise<{ exitCode: number; stdout: string; stderr: string }>;
const json = async (run: Run, cmd: string) => JSON.parse((await run(cmd)).stdout);

/**
 * Placeholders a reader fills in (an id from their own workspace, a browser), replaced by values the
 * same test just created. Each entry: the example's text → the text run instead (computed with `run`).
 */
const SUBSTITUTIONS: Array<{ from: RegExp; to: (run: Run, m: RegExpMatchArray) => Promise<string>; why: string }> = [
  {
    from: /RESTORE_POINT/,
    to: async (run) => ((await json(run, 'opsctl kv status --json')) as Array<{ restorePoint: { file: string } }>)[0].restorePoint.file,
    why: 'RESTORE_POINT: the path kv status prints for the upgrade just run',
  },
  {
    from: /^opsctl tracker epics (comment-add|delete) 12 /,
    to: async (run, m) => `opsctl tracker epics ${m[1]} ${(await json(run, 'opsctl tracker epics list --json=id')).at(-1).id} `,
    why: 'epic 12: the epic created before (by the README line above, or by SETUP)',
  },
  {
    from: /^opsctl tracker epics reply 12 40 /,
    to: async (run) => {
      const epic = (await json(run, 'opsctl tracker epics list --json=id')).at(-1).id;
      const comment = (await json(run, `opsctl tracker epics comments ${epic} --json=id`)).at(-1).id;
      return `opsctl tracker epics reply ${epic} ${comment} `;
    },
    why: 'epic 12 and its comment 40: the ones the lines before created',
  },
  {
    from: /^opsctl tracker custom-fields update UUID --data '\{"values":\[\{"id":"…"\},/,
    to: async (run) => {
      const field = (await json(run, 'opsctl tracker custom-fields list --json')).find((f: any) => f.enabled && f.values?.length);
      return `opsctl tracker custom-fields update ${field.id} --data '{"values":[{"id":"${field.values[0].id}"},`;
    },
    why: 'UUID and "…": a custom field of the workspace and one of its values',
  },
  {
    from: /--story 57$/,
    to: async (run) => `--story ${(await json(run, 'opsctl tracker stories create --name "README example story" --json=id')).id}`,
    why: 'story 57: a story created for the upload',
  },
  {
    from: /^opsctl tracker stories (move|comment-add|task-add) 57 /,
    to: async (run, m) => `opsctl tracker stories ${m[1]} ${(await json(run, "opsctl tracker stories search --data '{}' --json=id"))[0].id} `,
    why: 'story 57: the story the "Stories and workflows" block created first',
  },
  {
    from: /^opsctl tracker stories (reply 57 --parent-id|react 57) 60 /,
    to: async (run, m) => {
      const story = (await json(run, "opsctl tracker stories search --data '{}' --json=id"))[0].id;
      const comment = (await json(run, `opsctl tracker stories comments ${story} --json=id`))[0].id;
      return m[1].startsWith('reply') ? `opsctl tracker stories reply ${story} --parent-id ${comment} ` : `opsctl tracker stories react ${story} ${comment} `;
    },
    why: 'story 57 and its comment 60: the ones the lines before created',
  },
  {
    from: /^opsctl tracker stories task-check 57 61$/,
    to: async (run) => {
      const story = (await json(run, "opsctl tracker stories search --data '{}' --json=id"))[0].id;
      return `opsctl tracker stories task-check ${story} ${(await json(run, `opsctl tracker stories get ${story} --json=tasks`)).tasks.at(-1).id}`;
    },
    why: 'story 57 and its task 61: the ones the lines before created',
  },
  {
    from: /--subject-id 58 --verb blocks --object-id 57 |--story-ids 57,58 /,
    to: async (run, m) => {
      const [a, b] = (await json(run, "opsctl tracker stories search --data '{}' --json=id")).map((x: { id: number }) => x.id);
      return m[0].startsWith('--subject-id') ? `--subject-id ${b} --verb blocks --object-id ${a} ` : `--story-ids ${a},${b} `;
    },
    why: 'stories 57 and 58: the two stories the block created',
  },
  {
    from: /^opsctl labels permissions remove 0a1b2c /,
    to: async (run) => {
      const label = (await json(run, 'opsctl labels create --title "README example" --json=id')).id;
      const add = await run(`opsctl labels permissions add ${label} bob@example.com=READER`);
      if (add.exitCode !== 0) throw new Error(add.stderr);
      return `opsctl labels permissions remove ${label} `;
    },
    why: 'label 0a1b2c: a label created here, with bob@example.com granted a role to remove',
  },
  {
    from: /^opsctl login --scopes (.*)$/,
    to: async (_run, m) => `opsctl login --scopes ${m[1]} --consent-as alice@example.com`,
    why: 'no person at a browser: --consent-as, the headless path of the local mock, gives the consent',
  },
];

/** Lines of a block that are not opsctl commands but whose opsctl part is an example. */
const EMBEDDED_OPSCTL: Record<string, string> = {
  '$ curl -H "Authorization: Bearer $(opsctl auth token)" …': 'opsctl auth token',
};

/** Steps a block needs first that its own text leaves to the reader, and why. */
const SETUP: Record<string, { cmds: string[]; why: string }> = {
  'opsctl tracker epics delete 12 --dry-run        # dry run: would delete epic 12: - epic 12 "Q3 launch"': {
    cmds: ['opsctl tracker epics create --name "Q3 launch"', 'opsctl login --consent-as alice@example.com'],
    why: 'the epic to delete, and a sign-in for the label service (the "Login" section)',
  },
  'opsctl labels apply -f sensitivity.yaml --dry-run    # print the plan, send nothing': {
    cmds: ['opsctl login --consent-as alice@example.com'],
    why: 'the label service needs a sign-in with drive.labels (the "Login" section)',
  },
  'opsctl labels export --all > all-labels.yaml': {
    cmds: ['opsctl login --consent-as alice@example.com', 'opsctl labels apply -f sensitivity.yaml --publish'],
    why: 'a sign-in, and the label of the block above (each block runs in a fresh configuration)',
  },
};

/** Documented exit codes other than 0. */
const EXIT: Record<string, { code: number; why: string }> = {
  'opsctl kv rollback                                    # only while some member still runs 3.2': {
    code: 1,
    why: 'run in README order it follows the finished upgrade: "Once the cluster version moved to 3.3 it refuses" (and names kv restore)',
  },
};

interface Block {
  heading: string;
  line: number;
  commands: Array<{ text: string; line: number }>;
}

function parseReadme(text: string): { blocks: Block[]; files: Record<string, string> } {
  const blocks: Block[] = [];
  const files: Record<string, string> = {};
  const lines = text.split('\n');
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#+ /.test(l)) heading = l.replace(/^#+ /, '');
    const fence = /^```(\w*)\s*$/.exec(l);
    if (!fence) continue;
    const lang = fence[1];
    const body: Array<{ text: string; line: number }> = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push({ text: lines[i]!, line: i + 1 });
    if (lang === 'yaml') {
      const name = /^# (\S+\.ya?ml)\s*$/.exec(body[0]?.text ?? '')?.[1];
      if (name) files[name] = body.map((b) => b.text).join('\n') + '\n';
      continue;
    }
    if (!['', 'sh', 'console'].includes(lang!)) continue;
    const commands = body
      .map(({ text: t, line }) => ({ text: EMBEDDED_OPSCTL[t.trim()] ?? t.trim().replace(/^\$ /, ''), line }))
      .filter((c) => /^opsctl\b/.test(c.text));
    if (commands.length) blocks.push({ heading, line: body[0]!.line - 1, commands });
  }
  return { blocks, files };
}

const { blocks, files } = parseReadme(README);
const shim = mkdtempSync(join(tmpdir(), 'opsctl-readme-bin-'));
writeFileSync(join(shim, 'opsctl'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
chmodSync(join(shim, 'opsctl'), 0o755);
const temps: string[] = [shim];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

it('finds the README examples (the parser still matches the README)', () => {
  const all = blocks.flatMap((b) => b.commands.map((c) => c.text));
  expect(all.length).toBeGreaterThan(25);
  expect(Object.keys(files).sort()).toEqual(['labels.yaml', 'prod.yaml', 'sensitivity.yaml']);
  // Every skip, substitution and setup entry still names a line of the README.
  for (const key of [...Object.keys(SKIP), ...Object.keys(SETUP), ...Object.keys(EXIT)]) expect(all).toContain(key);
  for (const s of SUBSTITUTIONS) expect(all.some((c) => s.from.test(c)), String(s.from)).toBe(true);
});

for (const block of blocks) {
  describe(`README line ${block.line} (${block.heading})`, () => {
    const cwd = mkdtempSync(join(tmpdir(), 'opsctl-readme-'));
    temps.push(cwd);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${shim}:${process.env.PATH}`,
      OPSCTL_CONFIG_DIR: join(cwd, '.opsctl'),
      NO_COLOR: '1',
      CI: '1',
    };
    for (const v of ['OPSCTL_PROFILE', 'OPSCTL_TRACKER_URL', 'OPSCTL_AUTH_URL', 'OPSCTL_API_URL', 'OPSCTL_LABELS_URL', 'OPSCTL_TRACKER_TOKEN', 'OPSCTL_ACCESS_TOKEN']) delete env[v];
    const run: Run = async (cmd) => {
      const r = await execa('/bin/sh', ['-c', cmd], { cwd, env, reject: false, extendEnv: false, stdin: 'ignore' });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    };
    let sandboxStarted = false;
    afterAll(async () => {
      if (sandboxStarted) await run('opsctl kv sandbox down');
    });

    it(block.commands.map((c) => c.text.replace(/\s+#.*$/, '')).join(' ; '), async () => {
      mkdirSync(cwd, { recursive: true });
      for (const [name, content] of Object.entries({ ...FIXTURES, ...files })) writeFileSync(join(cwd, name), content);
      for (const { text, line } of block.commands) {
        if (SKIP[text]) continue;
        for (const cmd of SETUP[text]?.cmds ?? []) {
          const r = await run(cmd);
          expect(r.exitCode, `setup for README line ${line}: ${cmd}\n${r.stderr}`).toBe(0);
        }
        let cmd = text;
        for (const s of SUBSTITUTIONS) {
          const m = cmd.match(s.from);
          if (m) cmd = cmd.replace(s.from, await s.to(run, m));
        }
        if (/kv sandbox up/.test(cmd)) sandboxStarted = true;
        const r = await run(cmd);
        const want = EXIT[text]?.code ?? 0;
        expect(r.exitCode, `README line ${line}: ${cmd}\n${r.stderr}`).toBe(want);
        expect(r.stderr).not.toMatch(/unexpected error/i);
      }
    }, 180_000);
  });
}

it("the README's prod.yaml loads with the built binary (its 10.0.0.x endpoints moved to a closed loopback port: no traffic leaves the machine)", async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'opsctl-readme-prod-'));
  temps.push(cwd);
  writeFileSync(join(cwd, 'prod.yaml'), files['prod.yaml']!.replace(/http:\/\/10\.0\.0\.\d+:2379/g, 'http://127.0.0.1:9'));
  const r = await execa(process.execPath, [BIN, 'kv', 'health', '--cluster', 'prod.yaml', '--json'], {
    cwd,
    reject: false,
    env: { OPSCTL_CONFIG_DIR: join(cwd, '.opsctl'), NO_COLOR: '1' },
  });
  expect(r.stderr).not.toContain('is not a function');
  expect(r.stderr).not.toContain('neither JSON nor YAML');
  expect(r.stderr).not.toMatch(/unexpected error/i);
  // Three members, all unreachable: a failure (exit 1) that names them, not a usage error about the file.
  expect(r.exitCode).toBe(1);
  expect(`${r.stdout}${r.stderr}`).toContain('infra3');
});

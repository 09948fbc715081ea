import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { BIN, runBin } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Issue 27, item 10b, through the built binary: a file given to a reader (`--data @FILE`, `--input FILE`,
 * `-f FILE`, `--cluster FILE`) that is not what was expected is named with the line, the column and what
 * was expected; none of its characters reach the output (it may be /etc/shadow). Exit 2, nothing sent.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;
const SECRET = 'S3CR3T';
const shadow = () => join(dir, 'shadow');

async function run(...args: string[]) {
  const r = await runBin(args, { env, cwd: dir });
  return { code: r.exitCode, out: `${String(r.stdout)}\n${String(r.stderr)}` };
}
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'api'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-content-'));
  env = { ...trackerEnv(mock, join(dir, 'config')), OPSCTL_API_URL: mock.url, OPSCTL_ACCESS_TOKEN: 'tok' };
  file('shadow', `root:$6$${SECRET}hash:19000:0:99999:7:::\ndaemon:*${SECRET}:19000:0:99999:7:::\n`);
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('file content is never echoed in an error', () => {
  it('--data @FILE and api --input FILE: the file, line, column and what JSON expected there', async () => {
    mock.requests.length = 0;
    const d = await run('tracker', 'stories', 'create', '--name', 'x', '--data', `@${shadow()}`);
    expect(d.code).toBe(2);
    expect(d.out).toContain(`--data: ${shadow()} is not valid JSON: line 1, column 1: expected a value`);
    expect(d.out).not.toContain(SECRET);
    expect(d.out).not.toContain('root');
    const i = await run('api', '-X', 'POST', '/media/v3/channels', '--input', shadow());
    expect(i.code).toBe(2);
    expect(i.out).toContain(`--input: ${shadow()} is not valid JSON: line 1, column 1: expected a value`);
    expect(i.out).not.toContain(SECRET);
    const j = file('late.json', `{"name": "ok",\n  "x": ${SECRET}}`);
    const l = await run('tracker', 'stories', 'create', '--data', `@${j}`);
    expect(l.code).toBe(2);
    expect(l.out).toContain('line 2, column 8: expected a value');
    expect(l.out).not.toContain(SECRET);
    expect(mock.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  });

  it('apply -f (tracker and labels), import -f and kv --cluster', async () => {
    const yaml = file('bad.yaml', `labels:\n  - name: "${SECRET}\n  - name: b\n`);
    for (const args of [
      ['tracker', 'labels', 'apply', '-f', shadow(), '--dry-run'],
      ['tracker', 'labels', 'apply', '-f', yaml, '--dry-run'],
      ['labels', 'apply', '-f', shadow(), '--dry-run'],
      ['labels', 'apply', '-f', yaml, '--dry-run'],
      ['tracker', 'stories', 'import', '-f', file('s.json', `[{"external_id": ${SECRET}}]`), '--dry-run'],
      ['tracker', 'stories', 'import', '-f', file('s.csv', `external_id,name\n"a${SECRET}"x,b\n`), '--dry-run'],
      ['kv', 'health', '--cluster', yaml],
    ]) {
      const r = await run(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out, args.join(' ')).not.toContain(SECRET);
      expect(r.out, args.join(' ')).toContain(args.includes('--cluster') ? yaml : (args[args.indexOf('-f') + 1] ?? ''));
    }
    const y = await run('tracker', 'labels', 'apply', '-f', yaml, '--dry-run');
    expect(y.out).toMatch(/line \d+, column \d+: expected a closing quote/);
    const s = await run('labels', 'apply', '-f', shadow(), '--dry-run');
    expect(s.out).toContain('unknown key (a key of');
  });
});

/**
 * `--data @FILE` read as `-f` and `-F` read their files (commands/lib/file-flag.ts): the flag, the file, the
 * cause in words, the fix, exit 2 — never a bare ENOENT or EACCES.
 */
describe('a file that cannot be read: --data @FILE says it as -f and -F do', () => {
  const shape = (flag: string, name: string, cause: string) => new RegExp(`^X ${flag}: ${name.replace(/\./g, '\\.')} ${cause}\\n {2}\\S`, 'm');

  it('a file that does not exist: "--data: nosuch.json does not exist", check the path, exit 2, nothing sent', async () => {
    mock.requests.length = 0;
    const cases: Array<[string[], string, string]> = [
      [['tracker', 'stories', 'create', '--name', 'x', '--data', '@nosuch.json'], '--data', 'nosuch.json'],
      [['tracker', 'stories', 'update', '1', '--data', '@nosuch.json'], '--data', 'nosuch.json'],
      [['tracker', 'labels', 'apply', '-f', 'nosuch.yaml'], '--file', 'nosuch.yaml'],
      [['api', '-X', 'POST', '/media/v3/channels', '-F', 'title=@nosuch.md'], '-F', 'nosuch.md'],
    ];
    for (const [args, flag, name] of cases) {
      const r = await run(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out, args.join(' ')).toMatch(shape(flag, name, 'does not exist'));
      expect(r.out, args.join(' ')).toContain('check the path (relative paths start from the current directory)');
      expect(r.out, args.join(' ')).not.toContain('ENOENT');
    }
    const data = await run('tracker', 'stories', 'create', '--name', 'x', '--data', '@nosuch.json');
    expect(data.out).toContain('give @FILE (a JSON object in a file), - for stdin, or the JSON object itself');
    expect(mock.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  });

  it.skipIf(!(process.getuid?.() === 0 && existsSync('/usr/bin/setpriv')))(
    'a file the user may not read (as nobody): "--data: private.json cannot be read: permission denied" and how to fix it, as -f; exit 2, no content',
    async () => {
      const nd = mkdtempSync(join(tmpdir(), 'opsctl-small-nobody-'));
      try {
        chmodSync(nd, 0o755);
        const priv = join(nd, 'private.json');
        writeFileSync(priv, `{"name": "${SECRET}"}`);
        chmodSync(priv, 0o600);
        const cfg = join(nd, 'config');
        mkdirSync(cfg, { mode: 0o700 });
        chownSync(cfg, 65534, 65534);
        const asNobody = (...argv: string[]) =>
          execa('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...argv], {
            reject: false,
            cwd: nd,
            env: {
              PATH: process.env.PATH,
              HOME: '/nonexistent',
              NO_COLOR: '1',
              OPSCTL_CONFIG_DIR: cfg,
              OPSCTL_TRACKER_URL: mock.url,
              OPSCTL_TRACKER_TOKEN: mock.trackerToken,
            },
            extendEnv: false,
          });
        for (const [args, flag] of [
          [['tracker', 'stories', 'create', '--name', 'x', '--data', '@private.json'], '--data'],
          [['tracker', 'labels', 'apply', '-f', 'private.json'], '--file'],
        ] as Array<[string[], string]>) {
          const r = await asNobody(...args);
          const out = `${String(r.stdout)}\n${String(r.stderr)}`;
          expect(r.exitCode, out).toBe(2);
          expect(out).toMatch(shape(flag, 'private.json', 'cannot be read: permission denied'));
          expect(out).toContain('give your user read access (ls -l private.json), or copy it somewhere you can read');
          expect(out).not.toContain('EACCES');
          expect(out).not.toContain(SECRET);
        }
      } finally {
        rmSync(nd, { recursive: true, force: true });
      }
    },
  );
});

import { execa } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/** `--jq EXPR` on the built binary: jq (WebAssembly, from the jq-wasm package) over the JSON a command prints. */
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  cfg = tempConfigDir('opsctl-jq-');
  env = trackerEnv(mock, cfg.dir);
  for (const [name, color] of [
    ['jq-bug', '#ff0000'],
    ['jq-chore', '#00ff00'],
  ] as const) {
    const r = await runBin(['tracker', 'labels', 'create', '--name', name, '--color', color], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
  }
});
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('--jq', () => {
  it('prints strings raw, one result a line (like gh --jq)', async () => {
    const r = await runBin(['tracker', 'labels', 'list', '--jq', '.[] | select(.name | startswith("jq-")) | .name'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toBe('jq-bug\njq-chore');
  });

  it('prints objects as compact JSON when piped, and works after --json=fields', async () => {
    const r = await runBin(['tracker', 'labels', 'list', '--json=name,color', '--jq', '.[] | select(.name == "jq-bug")'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toBe('{"name":"jq-bug","color":"#ff0000"}');
  });

  it('works before the command word too, and on a single record', async () => {
    const list = await runBin(['tracker', 'labels', 'list', '--json=id,name'], { env });
    const id = (JSON.parse(String(list.stdout)) as Array<{ id: number; name: string }>).find((l) => l.name === 'jq-chore')!.id;
    const r = await runBin(['--jq', '.color', 'tracker', 'labels', 'get', String(id)], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toBe('#00ff00');
  });

  it('implies JSON: a command that prints a plan for people prints its data instead', async () => {
    const r = await runBin(['help', 'exit-codes', '--jq', 'map(select(.code == 5)) | .[0].name'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toBe('declined');
  });

  it("a bad expression exits 2 with jq's message, prints nothing on stdout and sends nothing", async () => {
    mock.requests.length = 0;
    const r = await runBin(['tracker', 'labels', 'list', '--jq', '.[] | {name'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stdout)).toBe('');
    expect(String(r.stderr)).toMatch(/^X --jq: syntax error/m);
    expect(String(r.stderr)).toContain('fix the jq expression');
    expect(mock.requests).toHaveLength(0);
  });

  it('a bad expression on a create creates nothing', async () => {
    const r = await runBin(['tracker', 'labels', 'create', '--name', 'jq-never', '--jq', '.name # trailing comment\n | {'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toMatch(/^X --jq: syntax error.* line 2/m);
    const names = await runBin(['tracker', 'labels', 'list', '--jq', '.[].name'], { env });
    expect(String(names.stdout).split('\n')).not.toContain('jq-never');
    // a comment at the end of an expression is fine (it is compiled on a line of its own)
    const ok = await runBin(['tracker', 'labels', 'create', '--name', 'jq-made', '--jq', '.name # the new name'], { env });
    expect(ok.exitCode, String(ok.stderr)).toBe(0);
    expect(String(ok.stdout)).toBe('jq-made');
  });

  it("an expression that fails on this data exits 2 with jq's message", async () => {
    const r = await runBin(['tracker', 'labels', 'list', '--jq', '.[0].name.x'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stdout)).toBe('');
    expect(String(r.stderr)).toContain('X --jq: Cannot index string with string ("x")');
  });

  it("the label service's commands take it too (the one renderer)", async () => {
    const home = tempConfigDir('opsctl-jq-labels-');
    try {
      const login = await runBin(['login', '--consent-as', 'alice@example.com'], { env: { OPSCTL_CONFIG_DIR: home.dir } });
      expect(login.exitCode, String(login.stderr)).toBe(0);
      const r = await runBin(['labels', 'list', '--jq', 'type'], { env: { OPSCTL_CONFIG_DIR: home.dir } });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stdout)).toBe('array');
    } finally {
      home.cleanup();
    }
  });
});

const HOOKS = fileURLToPath(new URL('../helpers/record-modules.cjs', import.meta.url));

/** The chunk of dist/ that holds jq-wasm (bundled through its inline entry), found by its own text. */
function jqChunks(): string[] {
  const dir = join(dirname(BIN), '..', 'dist', 'chunks');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cjs') && readFileSync(join(dir, f), 'utf8').includes('jq-wasm/inline:'))
    .map((f) => join(dir, f));
}

/** Whether a run of the binary loaded the chunk that holds jq-wasm. */
async function loadsJq(args: string[]): Promise<boolean> {
  const chunks = jqChunks();
  expect(chunks.length).toBe(1);
  const r = await execa(process.execPath, ['--require', HOOKS, BIN, ...args], { env: { ...env, OPSCTL_RECORD_MODULES: '1' }, reject: false });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  return String(r.stderr)
    .split('\n')
    .some((l) => l.startsWith('ran ') && chunks.some((c) => l.endsWith(c)));
}

describe('--jq loads jq only when it is used', () => {
  it('--version, --help and a plain list do not load jq-wasm; a list with --jq does', async () => {
    expect(await loadsJq(['--version'])).toBe(false);
    expect(await loadsJq(['--help'])).toBe(false);
    expect(await loadsJq(['tracker', 'labels', 'list', '--json'])).toBe(false);
    expect(await loadsJq(['tracker', 'labels', 'list', '--jq', 'length'])).toBe(true);
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * gh's output habits (issue 26, item 3), through the built binary on a real terminal where a person
 * would see them, and piped where a script would: CLICOLOR / CLICOLOR_FORCE, text errors on a
 * terminal, "did you mean" for a --json field, `--json id,name`, narrow tables that never wrap,
 * plain file errors, the ids an import made, and the wording of a cut-short search.
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);

const SGR = /\u001b\[[0-9;]*m/;

describe.runIf(hasScript)('output habits of gh', () => {
  const cfg = tempConfigDir('opsctl-habits-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir };
  const pty = async (args: string[], opts: { cols?: number; env?: NodeJS.ProcessEnv } = {}) => {
    const s = PtySession.opsctl(args, { cols: opts.cols, env: { ...env, NO_COLOR: undefined, ...opts.env } });
    const code = await s.exitCode(120_000);
    return { code, text: s.text, raw: s.output };
  };

  beforeAll(async () => {
    const labels = [
      ['bug', 'Something that does not work as the user was told it would'],
      ['needs-design-review-before-merge', 'A change that a designer looks at first'],
    ];
    for (const [name, description] of labels) {
      const r = await runBin(['tracker', 'labels', 'create', '--name', name!, '--description', description!, '--color', '#aa0000'], { env });
      expect(r.exitCode, String(r.stderr)).toBe(0);
    }
  }, 180_000);
  afterAll(() => cfg.cleanup());

  it('colour: on by default on a terminal, off with CLICOLOR=0 or NO_COLOR; CLICOLOR_FORCE=1 colours a pipe, NO_COLOR still wins', async () => {
    expect((await pty(['tracker', 'labels', 'list'])).raw).toMatch(SGR);
    const off = await pty(['tracker', 'labels', 'list'], { env: { CLICOLOR: '0' } });
    expect(off.code).toBe(0);
    expect(off.text).toContain('NAME');
    expect(off.raw).not.toMatch(SGR);
    const forced = await runBin(['tracker', 'labels', 'get', 'nosuch'], { env: { ...env, NO_COLOR: '', CLICOLOR_FORCE: '1' } });
    expect(forced.exitCode).not.toBe(0);
    expect(String(forced.stderr)).toMatch(SGR);
    const both = await runBin(['tracker', 'labels', 'get', 'nosuch'], { env: { ...env, NO_COLOR: '1', CLICOLOR_FORCE: '1' } });
    expect(String(both.stderr)).not.toMatch(SGR);
  }, 240_000);

  it('a --json field typo: text with "did you mean name?" on a terminal, JSON when piped; --json id,name and --json name work', async () => {
    const typo = await pty(['tracker', 'labels', 'list', '--json=nmae']);
    expect(typo.code).toBe(2);
    expect(typo.text).toContain('X --json: unknown field nmae (did you mean name?)');
    expect(typo.text).not.toContain('{"error"');
    const piped = await runBin(['tracker', 'labels', 'list', '--json=nmae'], { env });
    expect(piped.exitCode).toBe(2);
    expect(JSON.parse(String(piped.stderr)).error.message).toBe('--json: unknown field nmae (did you mean name?)');
    const two = await runBin(['tracker', 'labels', 'list', '--json', 'id,name'], { env });
    expect(two.exitCode, String(two.stderr)).toBe(0);
    expect(JSON.parse(String(two.stdout))).toEqual([
      { id: 1, name: 'bug' },
      { id: 2, name: 'needs-design-review-before-merge' },
    ]);
    const one = await runBin(['tracker', 'labels', 'list', '--json', 'name'], { env });
    expect(JSON.parse(String(one.stdout))).toEqual([{ name: 'bug' }, { name: 'needs-design-review-before-merge' }]);
    // a word after --json that a command takes as its argument stays its argument
    const get = await runBin(['tracker', 'labels', 'get', '--json', 'bug'], { env });
    expect(get.exitCode, String(get.stderr)).toBe(0);
    expect(JSON.parse(String(get.stdout)).name).toBe('bug');
  }, 240_000);

  it('a table at 20 columns drops the low-value columns and never wraps; at 0 columns each row is one line', async () => {
    const narrow = await pty(['tracker', 'labels', 'list'], { cols: 20 });
    expect(narrow.code).toBe(0);
    const lines = narrow.text.split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(3);
    for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(20);
    expect(lines[0]).toMatch(/^ID\s+NAME/);
    expect(lines[0]).not.toContain('DESCRIPTION');
    expect(lines[2]).toMatch(/^2\s+needs-/);
    const zero = await pty(['tracker', 'labels', 'list'], { cols: 0 });
    const rows = zero.text.split('\n').filter((l) => l.trim());
    expect(rows).toHaveLength(3);
    expect(rows[2]).toContain('needs-design-review-before-merge');
  }, 240_000);

  it('a missing file names the path and says it does not exist (no ENOENT)', async () => {
    const r = await pty(['tracker', 'labels', 'apply', '-f', 'no-such.yaml']);
    expect(r.code).toBe(2);
    expect(r.text).toContain('X --file: no-such.yaml does not exist');
    expect(r.text).not.toContain('ENOENT');
  }, 120_000);

  it('stories import prints the ids it created (TSV piped: id, external_id, name); a cut-short search reads "showing 25 of 60 stories found"', async () => {
    const file = join(cfg.dir, 'import.yaml');
    writeFileSync(file, `stories:\n${Array.from({ length: 60 }, (_, i) => `  - {external_id: "imp-${i}", name: "needle ${i}"}`).join('\n')}\n`);
    const r = await runBin(['tracker', 'stories', 'import', '-f', file], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const rows = String(r.stdout)
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows).toHaveLength(60);
    expect(rows.map((x) => x[1])).toEqual(Array.from({ length: 60 }, (_, i) => `imp-${i}`));
    const found = await runBin(['tracker', 'stories', 'search', '--data', '{"external_id":"imp-7"}', '--json=id'], { env });
    expect(JSON.parse(String(found.stdout))).toEqual([{ id: Number(rows[7]?.[0]) }]);
    const search = await runBin(['tracker', 'search', 'stories', '--query', 'needle'], { env });
    expect(search.exitCode).toBe(0);
    expect(String(search.stderr)).toContain('showing 25 of 60 stories found; more exist');
  }, 240_000);

  it('--no-input on a terminal says --no-input forbids asking (kv password too)', async () => {
    const r = await pty(['kv', 'health', '--user', 'root', '--no-input', '--endpoints', 'http://127.0.0.1:9']);
    expect(r.code).toBe(2);
    expect(r.text).toContain('(--no-input forbids asking)');
    expect(r.text).not.toContain('no terminal');
  }, 120_000);
});

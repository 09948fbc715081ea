import { describe, expect, it } from 'vitest';
import { useTrackerMock } from '../helpers/tracker.js';

const t = useTrackerMock();

describe('--json never swallows a word', () => {
  it('before the command: `opsctl --json tracker epics list` runs the list', async () => {
    await t.json('tracker', 'epics', 'create', '--name', 'First');
    const r = await t.cli('--json', 'tracker', 'epics', 'list');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().map((e: { name: string }) => e.name)).toEqual(['First']);
  });

  it('before a positional: `tracker epics get --json ID` reads the id', async () => {
    const { id } = await t.json('tracker', 'epics', 'create', '--name', 'Second');
    const r = await t.cli('tracker', 'epics', 'get', '--json', String(id));
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ id, name: 'Second' });
  });

  it('picks fields only when attached: --json=id,name', async () => {
    await t.json('tracker', 'epics', 'create', '--name', 'Third');
    const r = await t.cli('tracker', 'epics', 'list', '--json=id,name');
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(r.json()[0])).toEqual(['id', 'name']);
  });

  it('gh\'s `--json id,name` picks those fields; a typo among them is exit 2 with "did you mean" (JSON when piped)', async () => {
    await t.json('tracker', 'epics', 'create', '--name', 'Fourth');
    const r = await t.cli('tracker', 'epics', 'list', '--json', 'id,name');
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(r.json()[0])).toEqual(['id', 'name']);
    const one = await t.cli('tracker', 'epics', 'list', '--json', 'name');
    expect(one.code, one.stderr).toBe(0);
    expect(Object.keys(one.json()[0])).toEqual(['name']);
    const typo = await t.cli('tracker', 'epics', 'list', '--json', 'id,nmae');
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    const err = JSON.parse(typo.stderr.trim().split('\n').pop()!).error;
    expect(err).toMatchObject({ code: 'usage', message: '--json: unknown field nmae (did you mean name?)' });
  });

  it.each([
    [['--json', 'tracker', 'nosuch'], 'unknown_command', "unknown command 'nosuch'"],
    [['tracker', 'epics', 'list', '--bogus', '--json'], 'unknown_option', "unknown option '--bogus'"],
    [['tracker', 'epics', 'get', '--json'], 'missing_argument', "missing required argument 'id|name'"],
    [['tracker', 'epics', 'list', '--json=id', '--limit'], 'option_missing_argument', "'--limit <n>' argument missing"],
  ])('parse error under --json (%j) is one {"error":…} line on stderr, exit 2', async (argv, reason, message) => {
    const r = await t.cli(...argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const err = JSON.parse(lines[0]!).error;
    expect(err).toMatchObject({ code: 'usage', reason });
    expect(err.message).toContain(message);
  });

  it('without --json a parse error stays text', async () => {
    const r = await t.cli('tracker', 'nosuch');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'nosuch'");
    expect(r.stderr).not.toContain('{"error"');
  });
});

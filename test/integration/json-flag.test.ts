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

  it('a field list as a separate word is an excess argument (exit 2) whose JSON error says to attach it; nothing sent', async () => {
    const r = await t.cli('tracker', 'epics', 'list', '--json', 'id,name');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const err = JSON.parse(r.stderr.trim().split('\n').pop()!).error;
    expect(err).toMatchObject({ code: 'usage', reason: 'excess_arguments', hint: expect.stringContaining('--json=id,name') });
    expect(t.mock.requests).toHaveLength(0);
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

import { describe, expect, it } from 'vitest';
import { useTrackerMock } from '../helpers/tracker.js';
import type { TestState } from '../helpers/mock.js';

const t = useTrackerMock((tracker) => {
  tracker.stories = [];
  tracker.epics = [];
});

describe('tracker search all', () => {
  it('prints a kind/id/name table, keeps the groups under --json, and names every group cut short', async () => {
    for (let i = 0; i < 3; i++) await t.json('tracker', 'stories', 'create', '--name', `needle story ${i}`);
    await t.json('tracker', 'epics', 'create', '--name', 'needle epic');

    const r = await t.cli('tracker', 'search', 'all', '--query', 'needle', '--page-size', '2');
    expect(r.code).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.map((c) => [c[0], c[2]])).toEqual([
      ['epics', 'needle epic'],
      ['stories', 'needle story 0'],
      ['stories', 'needle story 1'],
    ]);
    expect(r.stdout).not.toContain('{');
    expect(r.stderr).toContain('showing 2 of 3 stories; more exist: opsctl tracker search stories --query "needle" --all');
    expect(r.stderr).not.toMatch(/of \d+ epics/);

    const j = await t.cli('tracker', 'search', 'all', '--query', 'needle', '--page-size', '2', '--json');
    expect(j.code).toBe(0);
    const body = j.json();
    expect(body.stories).toMatchObject({ total: 3 });
    expect(body.stories.data).toHaveLength(2);
    expect(body.stories.next).toMatch(/^\/api\/v3\/search\/stories\?/);

    // the hint's command does fetch the rest
    const all = await t.json('tracker', 'search', 'stories', '--query', 'needle', '--page-size', '2', '--all');
    expect(all.map((s: any) => s.name)).toEqual(['needle story 0', 'needle story 1', 'needle story 2']);
  });

  it("--entity-types takes the contract's kinds only: another is refused before sending (exit 2), the kinds given narrow the groups", async () => {
    await t.json('tracker', 'epics', 'create', '--name', 'kinds needle');
    await t.json('tracker', 'stories', 'create', '--name', 'kinds needle story');
    const bad = await t.cli('tracker', 'search', 'all', '--query', 'kinds', '--entity-types', 'epic,stories');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--entity-types: "stories" is not one of: story, milestone, epic, iteration, objective');
    const epics = await t.json('tracker', 'search', 'all', '--query', 'kinds', '--entity-types', 'epic');
    expect(Object.keys(epics)).toEqual(['epics']);
    expect(epics.epics.data.map((e: any) => e.name)).toEqual(['kinds needle']);
  });

  it('says nothing extra when every group is complete, and prints nothing for no match', async () => {
    await t.json('tracker', 'stories', 'create', '--name', 'lonely');
    const r = await t.cli('tracker', 'search', 'all', '--query', 'lonely');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\t')[0]).toBe('stories');
    expect(r.stderr).not.toContain('more exist');
    const none = await t.cli('tracker', 'search', 'all', '--query', 'zzz-no-such');
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
  });

  it("--all that meets the service's cap of 1000 results says to narrow the query, not to pass --all", async () => {
    const seed = await t.json('tracker', 'stories', 'create', '--name', 'capped needle');
    await t.mock.store.write((s: TestState) => {
      const base = s.tracker.stories.find((x: any) => x.id === seed.id);
      for (let i = 1; i <= 1004; i++) s.tracker.stories.push({ ...base, id: 1_000_000 + i, name: `capped needle ${i}` });
    });
    const r = await t.cli('tracker', 'search', 'stories', '--query', 'capped needle', '--all', '--page-size', '250', '--json=id');
    expect(r.code).toBe(0);
    expect(r.json()).toHaveLength(1000);
    expect(r.stderr).toContain('showing 1000 of 1005 stories found: the service returns no more for one search; narrow --query');
    expect(r.stderr).not.toContain('pass --all');
  });
});

import { describe, expect, it } from 'vitest';
import { resolveState } from '../../src/tracker/workflow-states.js';
import { csvRecords, importItems, planImport, chunks } from '../../src/tracker/story-import.js';

const WF = [
  {
    id: 1,
    name: 'Engineering',
    states: [
      { id: 11, name: 'To Do' },
      { id: 12, name: 'In Progress' },
      { id: 13, name: 'In Review' },
      { id: 14, name: 'Done' },
    ],
  },
  { id: 2, name: 'Design', states: [{ id: 21, name: 'Done' }] },
];

describe('resolveState', () => {
  it('finds a state by exact name (any case) or id, within the story workflow', () => {
    expect(resolveState(WF, 1, 'in progress').id).toBe(12);
    expect(resolveState(WF, 1, 'done').id).toBe(14);
    expect(resolveState(WF, 2, 'Done').id).toBe(21);
    expect(resolveState(WF, 1, '13').name).toBe('In Review');
  });
  it('never matches a prefix: "do" is not "Done", "To" is not "To Do"', () => {
    for (const prefix of ['do', 'To', 'In']) {
      expect(() => resolveState(WF, 1, prefix)).toThrow(new RegExp(`no workflow state is named "${prefix}"`));
    }
  });
  it('refuses an ambiguous name listing the candidates, and an unknown one listing every choice', () => {
    expect(() => resolveState(WF, undefined, 'Done')).toThrow(/matches 2 workflow states/);
    try {
      resolveState(WF, undefined, 'Done');
    } catch (err: any) {
      expect(err.exitCode).toBe(2);
      expect(err.hint).toContain('"Done" (Engineering, 14), "Done" (Design, 21)');
    }
    try {
      resolveState(WF, 1, 'Shipped');
    } catch (err: any) {
      expect(err.message).toContain('no workflow state is named "Shipped"');
      expect(err.hint).toBe('choose one of: "To Do" (11), "In Progress" (12), "In Review" (13), "Done" (14) (names match exactly, in any case)');
    }
    expect(() => resolveState(WF, 1, '21')).toThrow(/not a state of the story's workflow/);
  });
});

describe('stories import planning', () => {
  it('types CSV cells from the resource table and plans by external_id', () => {
    const rows = csvRecords([{ external_id: 'a', name: 'A', estimate: '3', labels: 'x; y', owner_ids: '', archived: 'false' }]);
    expect(rows).toEqual([{ external_id: 'a', name: 'A', estimate: 3, labels: [{ name: 'x' }, { name: 'y' }], archived: false }]);
    const found = importItems({ stories: [...rows, { external_id: 'b', name: 'B', state: 'Done' }] }, (i) => `#${i}`);
    if ('problem' in found) throw new Error(found.problem);
    expect(found.items[1]?.state).toBe('Done');
    const plan = planImport(found.items, [
      { id: 7, external_id: 'a' },
      { id: 8, external_id: null },
    ]);
    expect(plan.existing.map((e) => e.id)).toEqual([7]);
    expect(plan.create.map((i) => i.body.external_id)).toEqual(['b']);
    expect(chunks(Array.from({ length: 250 }, (_, i) => i)).map((c) => c.length)).toEqual([100, 100, 50]);
  });
  it('refuses duplicates and missing external ids, naming the item', () => {
    expect(
      importItems(
        [
          { external_id: 'a', name: 'A' },
          { external_id: 'a', name: 'B' },
        ],
        (i) => `row ${i + 2}`,
      ),
    ).toEqual({ problem: 'row 3: external_id "a" is also used by row 2' });
    expect(importItems([{ name: 'A' }], (i) => `stories[${i}]`)).toMatchObject({ problem: expect.stringContaining('stories[0]: external_id is required') });
    expect(importItems({ nope: 1 }, String)).toMatchObject({ problem: expect.stringContaining('expected a list') });
  });
});

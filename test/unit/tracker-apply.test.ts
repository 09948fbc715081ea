import { describe, expect, it } from 'vitest';
import { desiredItems, planApply, writes } from '../../src/tracker/apply.js';

const opts = { key: 'name', fields: ['name', 'description', 'color', 'archived'], createOnly: ['external_id'], prune: false };
const current = [
  { id: 1, name: 'bug', color: '#FF0000', description: 'broken', archived: false },
  { id: 2, name: 'feature', color: '#00ff00', description: null, archived: false },
  { id: 3, name: 'old', color: null, description: null, archived: false },
];

describe('planApply', () => {
  it('plans create, update, archive and unchanged; leaves unlisted records alone without --prune', () => {
    const plan = planApply(
      current,
      [
        { name: 'bug', color: '#ff0000' },
        { name: 'feature', description: 'new things' },
        { name: 'docs', color: '#0000ff', external_id: 'd1' },
        { name: 'OLD', archived: true },
      ],
      opts,
    );
    expect(plan.steps.map((s) => [s.action, s.key, s.id])).toEqual([
      ['unchanged', 'bug', 1],
      ['update', 'feature', 2],
      ['create', 'docs', undefined],
      ['archive', 'OLD', 3],
    ]);
    expect(plan.steps[1]?.body).toEqual({ description: 'new things' });
    expect(plan.steps[2]?.body).toEqual({ name: 'docs', color: '#0000ff', external_id: 'd1' });
    expect(plan.steps[3]?.body).toEqual({ name: 'OLD', archived: true });
    expect(plan.counts).toEqual({ create: 1, update: 1, archive: 1, delete: 0, unchanged: 1 });
    expect(plan.unlisted).toEqual([]);
  });

  it('compares colours case-insensitively and ignores fields the file leaves out', () => {
    const plan = planApply(current, [{ name: 'bug', color: '#ff0000' }, { name: 'feature' }, { name: 'old' }], opts);
    expect(writes(plan)).toEqual([]);
  });

  it('clears a field set to null in the file', () => {
    const plan = planApply(current, [{ name: 'bug', color: null }], opts);
    expect(plan.steps[0]).toMatchObject({ action: 'update', body: { color: null } });
  });

  it('deletes unlisted records with prune, and lists them without', () => {
    expect(planApply(current, [{ name: 'bug' }], opts).unlisted).toEqual(['feature', 'old']);
    const pruned = planApply(current, [{ name: 'bug' }], { ...opts, prune: true });
    expect(writes(pruned).map((s) => [s.action, s.id])).toEqual([
      ['delete', 2],
      ['delete', 3],
    ]);
  });

  it('creates an archived record in two steps and restores one with archived: false', () => {
    const plan = planApply(
      [{ ...current[0], archived: true }],
      [
        { name: 'bug', archived: false },
        { name: 'new', archived: true },
      ],
      opts,
    );
    expect(writes(plan).map((s) => [s.action, s.key, s.body])).toEqual([
      ['create', 'new', { name: 'new' }],
      ['update', 'bug', { archived: false }],
      ['archive', 'new', { archived: true }],
    ]);
  });

  it('renames with renamed_from: the record keeps its id, and prune never deletes a covered old name', () => {
    const plan = planApply(current, [{ name: 'defect', renamed_from: ['bugs', 'BUG'] }, { name: 'feature' }], { ...opts, prune: true });
    expect(plan.steps.map((s) => [s.action, s.key, s.id, s.renamedFrom])).toEqual([
      ['update', 'defect', 1, 'bug'],
      ['unchanged', 'feature', 2, undefined],
      ['delete', 'old', 3, undefined],
    ]);
    expect(plan.steps[0]?.body).toEqual({ name: 'defect' });
    // once renamed, the same file finds the record under its new name and plans nothing for it
    const again = planApply([{ ...current[0]!, name: 'defect' }, current[1]!], [{ name: 'defect', renamed_from: 'bug' }, { name: 'feature' }], {
      ...opts,
      prune: true,
    });
    expect(writes(again)).toEqual([]);
    // a rename that only changes case is still sent
    expect(planApply(current, [{ name: 'Bug', renamed_from: 'bug' }], opts).steps[0]).toMatchObject({ action: 'update', body: { name: 'Bug' } });
  });

  it('orders writes: creates, updates, archives, deletes', () => {
    const plan = planApply(current, [{ name: 'old', archived: true }, { name: 'feature', color: '#123456' }, { name: 'z' }], { ...opts, prune: true });
    expect(writes(plan).map((s) => s.action)).toEqual(['create', 'update', 'archive', 'delete']);
  });
});

describe('desiredItems', () => {
  const allowed = ['name', 'color', 'description', 'archived'];
  it('accepts a list or a mapping with the resource key', () => {
    expect(desiredItems([{ name: 'a' }], 'labels', 'name', allowed)).toEqual({ items: [{ name: 'a' }], problems: [], ignored: [] });
    expect(desiredItems({ labels: [{ name: 'a' }] }, 'labels', 'name', allowed)).toEqual({ items: [{ name: 'a' }], problems: [], ignored: [] });
  });
  it("takes one record (get --json) and drops the server's own fields, naming them once", () => {
    const got = desiredItems(
      [
        { id: 1, name: 'a', stats: {} },
        { id: 2, name: 'b' },
      ],
      'labels',
      'name',
      allowed,
      ['id', 'stats'],
    );
    expect(got).toEqual({ items: [{ name: 'a' }, { name: 'b' }], problems: [], ignored: ['id', 'stats'] });
    expect(desiredItems({ id: 1, name: 'a' }, 'labels', 'name', allowed, ['id'])).toEqual({ items: [{ name: 'a' }], problems: [], ignored: ['id'] });
  });
  it('checks renamed_from: a name or a list of them, not listed on its own, not claimed twice', () => {
    const rn = [...allowed, 'renamed_from'];
    expect(desiredItems([{ name: 'b', renamed_from: ['a', 'A2'] }], 'labels', 'name', rn).problems).toEqual([]);
    expect(desiredItems([{ name: 'B', renamed_from: 'b' }], 'labels', 'name', rn).problems).toEqual([]);
    expect(desiredItems([{ name: 'b', renamed_from: 3 }], 'labels', 'name', rn).problems).toEqual(['labels[0].renamed_from: must be a name or a list of them']);
    expect(
      desiredItems(
        [
          { name: 'b', renamed_from: 'a' },
          { name: 'c', renamed_from: 'A' },
        ],
        'labels',
        'name',
        rn,
      ).problems,
    ).toEqual(['labels[1].renamed_from: "A" is also renamed by labels[0]']);
  });
  it('names the item and the problem', () => {
    expect(desiredItems({ other: [] }, 'labels', 'name', allowed).problems).toEqual([
      '(top level): expected a list of labels, a mapping with a "labels:" list, or one named record',
    ]);
    expect(desiredItems([{ color: '#fff' }], 'labels', 'name', allowed).problems).toEqual(['labels[0].name: required']);
    expect(desiredItems([{ name: 'a', colour: 'x' }], 'labels', 'name', allowed).problems).toEqual([
      expect.stringContaining('labels[0].colour: unknown field'),
    ]);
    expect(desiredItems([{ name: 'a' }, { name: 'A' }], 'labels', 'name', allowed).problems).toEqual(['labels[1].name: "A" is listed twice (also labels[0])']);
    // every problem at once, 0-based like the file's own list
    expect(desiredItems([{ color: '#fff' }, 'x', { name: 'b', colour: 'y' }], 'labels', 'name', allowed).problems).toEqual([
      'labels[0].name: required',
      'labels[1]: must be a mapping such as {name: …}',
      expect.stringContaining('labels[2].colour: unknown field'),
    ]);
  });
});

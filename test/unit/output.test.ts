import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { cutToWidth, IOStreams, textWidth } from '../../src/core/io.js';
import { fitColumns, formatCell, render } from '../../src/core/output.js';

function io(tty: boolean, env: NodeJS.ProcessEnv = {}, columns?: number) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const streams = new IOStreams({ stdout, stderr, stdin: new PassThrough(), env, stdoutTTY: tty, stderrTTY: tty, stdinTTY: tty, columns });
  return { streams, out: () => out, err: () => err };
}

const rows = [
  { id: 1, name: 'bug', color: '#ff0000', archived: false, tags: ['a', 'b'] },
  { id: 22, name: 'feature\twith tab', color: null, archived: true, tags: [] },
];
const columns = [{ key: 'id' }, { key: 'name' }, { key: 'color' }, { key: 'archived' }];

describe('render', () => {
  it('prints an aligned table with an upper-case header on a TTY', () => {
    const t = io(true, { NO_COLOR: '1' });
    render(t.streams, { data: rows, columns }, {});
    expect(t.out()).toBe(
      ['ID  NAME              COLOR    ARCHIVED', '1   bug               #ff0000  false', '22  feature with tab           true', ''].join('\n'),
    );
  });

  it('prints TSV without header or colour when piped, tabs inside cells flattened', () => {
    const t = io(false, { FORCE_COLOR: undefined });
    render(t.streams, { data: rows, columns }, {});
    expect(t.out()).toBe('1\tbug\t#ff0000\tfalse\n22\tfeature with tab\t\ttrue\n');
  });

  it('colours the TTY header unless NO_COLOR is set, and colours pipes with FORCE_COLOR', () => {
    const colored = io(true);
    render(colored.streams, { data: rows, columns }, {});
    expect(colored.out()).toContain('\u001b[1m');
    const plain = io(true, { NO_COLOR: '1' });
    render(plain.streams, { data: rows, columns }, {});
    expect(plain.out()).not.toContain('\u001b[');
    const forced = io(false, { FORCE_COLOR: '1' });
    render(forced.streams, { data: { a: 1 } }, {});
    expect(forced.out()).toBe('a\t1\n');
  });

  it('prints all fields as JSON with --json and only the named ones with --json a,b', () => {
    const all = io(false);
    render(all.streams, { data: rows, columns, message: 'listed' }, { json: true });
    expect(JSON.parse(all.out())).toEqual(rows);
    expect(all.err()).toBe('');
    const some = io(false);
    render(some.streams, { data: rows, columns }, { json: 'name,id' });
    expect(JSON.parse(some.out())).toEqual([
      { name: 'bug', id: 1 },
      { name: 'feature\twith tab', id: 22 },
    ]);
    const one = io(false);
    render(one.streams, { data: rows[0] }, { json: 'tags' });
    expect(JSON.parse(one.out())).toEqual({ tags: ['a', 'b'] });
  });

  it('rejects an unknown --json field and lists the known ones', () => {
    const t = io(false);
    expect(() => render(t.streams, { data: rows }, { json: 'id,nope' })).toThrowError(UsageError);
    try {
      render(t.streams, { data: rows }, { json: 'nope' });
    } catch (err) {
      expect((err as UsageError).hint).toBe('available fields: id, name, color, archived, tags');
    }
  });

  it('prints a record as key/value lines and the message on stderr', () => {
    const t = io(false);
    render(t.streams, { data: { id: 1, name: 'bug' }, message: 'created label 1' }, {});
    expect(t.out()).toBe('id\t1\nname\tbug\n');
    expect(t.err()).toContain('created label 1');
  });

  it('shows (none) for an empty list on a TTY and nothing when piped', () => {
    const tty = io(true, { NO_COLOR: '1' });
    render(tty.streams, { data: [], columns }, {});
    expect(tty.out()).toBe('(none)\n');
    const pipe = io(false);
    render(pipe.streams, { data: [], columns }, {});
    expect(pipe.out()).toBe('');
  });
});

describe('record view', () => {
  it('shows nested objects as dotted keys, one value per line', () => {
    const t = io(false);
    render(t.streams, { data: { id: 7, name: 'bug', stats: { num_epics: 2, num_stories_total: 5 }, tags: ['a'] } }, {});
    expect(t.out()).toBe('id\t7\nname\tbug\nstats.num_epics\t2\nstats.num_stories_total\t5\ntags\ta\n');
  });
});

describe('tables on a terminal', () => {
  const long = 'word '.repeat(30).trim(); // 149 characters
  const wide = [
    { id: 1, name: long, state: 'in progress' },
    { id: 22, name: 'short', state: 'done' },
  ];
  const cols = [{ key: 'id' }, { key: 'name' }, { key: 'state' }];

  it('uses the whole width of a 200-column terminal: nothing is cut that fits', () => {
    const t = io(true, { NO_COLOR: '1' }, 200);
    render(t.streams, { data: wide, columns: cols }, {});
    expect(t.out()).toContain(long);
    for (const line of t.out().trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(200);
  });

  it('cuts only when the row cannot fit, the widest column first, and every line fits the terminal', () => {
    const t = io(true, { NO_COLOR: '1' }, 60);
    render(t.streams, { data: wide, columns: cols }, {});
    const lines = t.out().trimEnd().split('\n');
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^1 {3}word word .*… {2}in progress$/);
    expect(lines[2]).toMatch(/^22 {2}short +done$/);
  });

  it('never cuts below a sane minimum: a very narrow terminal drops the last columns instead, and no row wraps', () => {
    const t = io(true, { NO_COLOR: '1' }, 16);
    render(t.streams, { data: wide, columns: cols }, {});
    const lines = t.out().trimEnd().split('\n');
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(16);
    expect(lines[0]).toBe('ID  NAME');
    expect(lines[1]).toBe('1   word word w…');
    expect(fitColumns([3, 149, 11], [2, 4, 5], 12)).toEqual([3, 8, 8]);
  });

  it('a width of 0 or unknown cuts nothing', () => {
    for (const width of [0, undefined]) {
      const t = io(true, { NO_COLOR: '1' }, width);
      render(t.streams, { data: wide, columns: cols }, {});
      expect(t.out()).toContain(long);
    }
    expect(fitColumns([3, 149, 11], [2, 4, 5], 0)).toEqual([3, 149, 11]);
  });

  it('summarises nested arrays and objects instead of printing JSON; --json keeps the full data', () => {
    expect(formatCell(['a', 'b', 3])).toBe('a,b,3');
    expect(formatCell([{ id: 1 }, { id: 2 }, { id: 3 }])).toBe('3 items');
    expect(formatCell([{ id: 1 }])).toBe('1 item');
    expect(formatCell({ kind: 'owner', id: 7 })).toBe('kind=owner id=7');
    expect(formatCell({ a: { b: 1 }, c: 2 })).toBe('2 fields');
    const data = [{ id: 1, labels: [{ id: 4, name: 'bug' }], owner: { kind: 'user', id: 9 }, tags: ['x', 'y'] }];
    const c = [{ key: 'id' }, { key: 'labels' }, { key: 'owner' }, { key: 'tags' }];
    const t = io(true, { NO_COLOR: '1' }, 120);
    render(t.streams, { data, columns: c }, {});
    expect(t.out()).toBe('ID  LABELS  OWNER           TAGS\n1   1 item  kind=user id=9  x,y\n');
    expect(t.out()).not.toMatch(/[{[]/);
    const json = io(true, { NO_COLOR: '1' }, 120);
    render(json.streams, { data, columns: c }, { json: true });
    expect(JSON.parse(json.out())).toEqual(data);
  });

  it("shows a server's control characters in cells, records and text instead of obeying them; piped output is left as sent", () => {
    const evil = { id: 1, name: 'x\u001b[2J\u001b]0;owned\u0007y' };
    const t = io(true, { NO_COLOR: '1' }, 120);
    render(t.streams, { data: [evil], columns: [{ key: 'id' }, { key: 'name' }] }, {});
    render(t.streams, { data: evil }, {});
    render(t.streams, { text: 'value \u001b[31mred\u009b', message: 'made \u0007' }, {});
    expect(t.out()).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(t.out()).toContain('x^[[2J^[]0;owned^Gy');
    expect(t.out()).toContain('value ^[[31mred<U+009B>');
    expect(t.err()).toContain('made ^G');
    const piped = io(false);
    render(piped.streams, { data: [evil], columns: [{ key: 'id' }, { key: 'name' }] }, {});
    expect(piped.out()).toBe(`1\t${evil.name}\n`);
  });

  it('keeps its own colours in human text while neutralising everything else', () => {
    const t = io(true, { FORCE_COLOR: '1' }, 120);
    render(t.streams, { text: `${t.streams.color.bold('KIND')} \u001b[2J` }, {});
    expect(t.out()).toBe('\u001b[1mKIND\u001b[22m ^[[2J\n');
  });

  it('measures wide (CJK, emoji) and zero-width characters as the terminal does, so columns stay aligned', () => {
    expect(textWidth('日本語')).toBe(6);
    expect(textWidth('e\u0301')).toBe(1);
    expect(textWidth('🚀 go')).toBe(5);
    expect(cutToWidth('日本語テキスト', 7)).toBe('日本語…');
    const t = io(true, { NO_COLOR: '1' }, 0);
    render(
      t.streams,
      {
        data: [
          { id: 1, name: '日本語', state: 'x' },
          { id: 22, name: 'abc', state: 'y' },
        ],
        columns: [{ key: 'id' }, { key: 'name' }, { key: 'state' }],
      },
      {},
    );
    expect(t.out()).toBe('ID  NAME    STATE\n1   日本語  x\n22  abc     y\n');
    const narrow = io(true, { NO_COLOR: '1' }, 24);
    render(
      narrow.streams,
      { data: [{ id: 1, name: '日本語のとても長い名前です', state: 'x' }], columns: [{ key: 'id' }, { key: 'name' }, { key: 'state' }] },
      {},
    );
    for (const line of narrow.out().trimEnd().split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(24);
  });
});

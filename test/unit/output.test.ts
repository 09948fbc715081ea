import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { IOStreams } from '../../src/core/io.js';
import { render } from '../../src/core/output.js';

function io(tty: boolean, env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const streams = new IOStreams({ stdout, stderr, stdin: new PassThrough(), env, stdoutTTY: tty, stderrTTY: tty, stdinTTY: tty });
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
    expect(t.out()).toBe(['ID  NAME              COLOR    ARCHIVED', '1   bug               #ff0000  false', '22  feature with tab           true', ''].join('\n'));
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
    expect(JSON.parse(some.out())).toEqual([{ name: 'bug', id: 1 }, { name: 'feature\twith tab', id: 22 }]);
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

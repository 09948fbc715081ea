import { describe, expect, it } from 'vitest';
import { fileProblem, fileFix } from '../../src/core/file-errors.js';
import { IOStreams } from '../../src/core/io.js';
import { closest, keptColumns } from '../../src/core/output.js';
import { listNoun } from '../../src/commands/tracker/extra.js';

describe('output habits', () => {
  it('file errors in plain words', () => {
    const e = (code: string) => Object.assign(new Error(code), { code });
    expect(fileProblem(e('ENOENT'))).toBe('does not exist');
    expect(fileProblem(e('EACCES'))).toBe('cannot be read: permission denied');
    expect(fileProblem(e('EISDIR'))).toBe('is a directory, not a file');
    expect(fileFix(e('EACCES'), 'x.yaml')).toContain('ls -l x.yaml');
  });

  it('colour: CLICOLOR=0 off, CLICOLOR_FORCE on a pipe, NO_COLOR wins', () => {
    const level = (env: NodeJS.ProcessEnv, tty: boolean) => new IOStreams({ env, stdoutTTY: tty }).color.level;
    expect(level({}, true)).toBe(1);
    expect(level({ CLICOLOR: '0' }, true)).toBe(0);
    expect(level({}, false)).toBe(0);
    expect(level({ CLICOLOR_FORCE: '1' }, false)).toBe(1);
    expect(level({ CLICOLOR_FORCE: '0' }, false)).toBe(0);
    expect(level({ CLICOLOR_FORCE: '1', NO_COLOR: '1' }, false)).toBe(0);
  });

  it('did you mean: near names only', () => {
    expect(closest('nmae', ['id', 'name', 'color'])).toBe('name');
    expect(closest('colr', ['id', 'name', 'color'])).toBe('color');
    expect(closest('zzz', ['id', 'name'])).toBeUndefined();
  });

  it('narrow tables keep the first columns that fit at their narrowest; unknown width keeps all', () => {
    expect(keptColumns([2, 30, 7, 40], [2, 4, 5, 11], 20)).toEqual([0, 1]);
    expect(keptColumns([2, 30, 7, 40], [2, 4, 5, 11], 0)).toEqual([0, 1, 2, 3]);
    expect(keptColumns([20, 30], [2, 4], 5)).toEqual([0]);
  });

  it('a cut-short list says what it holds', () => {
    expect(listNoun('search', 'stories')).toBe('stories found');
    expect(listNoun('epics', 'paginated')).toBe('epics');
    expect(listNoun('groups', 'stories')).toBe('stories of the group');
  });
});

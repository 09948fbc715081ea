import { PassThrough } from 'node:stream';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { reportError } from '../../src/cli.js';
import { createContext } from '../../src/wiring/context.js';
import { ApiError, AuthError, InterruptedError, NetworkError, PartialError, UsageError, ValidationError } from '../../src/core/errors.js';
import { IOStreams } from '../../src/core/io.js';

function ctx(json = false) {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c) => (err += c));
  const c = createContext({
    env: { NO_COLOR: '1' },
    io: new IOStreams({ stderr, stdout: new PassThrough(), stdin: new PassThrough(), env: { NO_COLOR: '1' } }),
  });
  if (json) c.globals = { json: true };
  return { c, err: () => err };
}

describe('errors map to exit codes', () => {
  it.each([
    [new UsageError('bad flag'), 2],
    [new ValidationError('--color', 'is not a hex colour'), 2],
    [new AuthError('not signed in'), 4],
    [new PartialError('3 of 5 applied'), 3],
    [new InterruptedError(), 130],
    [new NetworkError('connection refused'), 1],
    [new ApiError('tracker', 500, 'boom', {}), 1],
    [new ApiError('tracker', 401, 'invalid token', {}), 4],
    [new Error('a bug'), 1],
    [new CommanderError(1, 'commander.unknownOption', "error: unknown option '--nope'"), 2],
    [new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'), 0],
  ])('%s → %i', (err, code) => {
    expect(reportError(ctx().c, err)).toBe(code);
  });

  it('prints the message and the hint for people', () => {
    const { c, err } = ctx();
    reportError(c, new UsageError('nothing to update', { hint: 'pass --name or --data' }));
    expect(err()).toBe('X nothing to update\n  pass --name or --data\n');
  });

  it('prints {"error":{…}} on stderr with --json', () => {
    const { c, err } = ctx(true);
    reportError(c, new ValidationError('--color', 'is not a hex colour', 'use #rrggbb'));
    expect(JSON.parse(err())).toEqual({ error: { code: 'validation', message: '--color: is not a hex colour', field: '--color', hint: 'use #rrggbb' } });
    const api = ctx(true);
    reportError(api.c, new ApiError('tracker', 422, 'duplicate name', {}));
    expect(JSON.parse(api.err())).toEqual({ error: { code: 'http_422', message: 'tracker: HTTP 422: duplicate name', status: 422, service: 'tracker' } });
  });

  it('hides the stack of an unexpected error unless --debug', () => {
    const { c, err } = ctx();
    reportError(c, new Error('kaboom'));
    expect(err()).toContain('unexpected error: kaboom');
    expect(err()).toContain('run again with --debug');
    expect(err()).not.toContain('at ');
  });
});

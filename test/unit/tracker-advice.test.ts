import { describe, expect, it } from 'vitest';
import { ABBREVIATION_ADVISED_MAX, adviceFor } from '@opsctl/shared/tracker/advice.js';
import { checkAdvice } from '../../src/tracker/advice.js';
import { UsageError } from '../../src/core/errors.js';

/** Seed 001: a project abbreviation "should be kept to 3 characters at most" (the contract advises, does not forbid). */
describe('adviceFor', () => {
  it('names the field, the length and the rule for a project abbreviation over 3 characters', () => {
    const [a, ...rest] = adviceFor('projects', { name: 'Backend', abbreviation: 'BACKEND' });
    expect(rest).toHaveLength(0);
    expect(a?.field).toBe('abbreviation');
    expect(a?.message).toContain('abbreviation "BACKEND" is 7 characters');
    expect(a?.message).toContain(`kept to ${ABBREVIATION_ADVISED_MAX} characters at most`);
    expect(a?.hint).toContain('--abbreviation BAC');
  });

  it('says nothing at 3 characters or fewer, counting characters, not UTF-16 units', () => {
    expect(adviceFor('projects', { abbreviation: 'BAC' })).toEqual([]);
    expect(adviceFor('projects', { abbreviation: '' })).toEqual([]);
    expect(adviceFor('projects', { abbreviation: '🚀🚀🚀' })).toEqual([]);
    expect(adviceFor('projects', { abbreviation: '🚀🚀🚀🚀' })[0]?.message).toContain('is 4 characters');
  });

  it('ignores other resources, a missing or non-string abbreviation, and bodies that are not objects', () => {
    expect(adviceFor('epics', { abbreviation: 'BACKEND' })).toEqual([]);
    expect(adviceFor('projects', { name: 'x' })).toEqual([]);
    expect(adviceFor('projects', { abbreviation: null })).toEqual([]);
    expect(adviceFor('projects', { abbreviation: 1234 })).toEqual([]);
    expect(adviceFor('projects', null)).toEqual([]);
    expect(adviceFor('projects', ['BACKEND'])).toEqual([]);
    expect(adviceFor('projects', 'BACKEND')).toEqual([]);
  });
});

describe('checkAdvice', () => {
  const bodies = [
    { body: { abbreviation: 'OK' }, where: 'projects[0] (Ok)' },
    { body: { abbreviation: 'BACKEND' }, where: 'projects[1] (Backend)' },
    { body: { abbreviation: 'FRONTEND' }, where: 'projects[2] (Frontend)' },
  ];

  it('warns once per offending record, naming where it is, and says it is sent anyway', () => {
    const lines: string[] = [];
    checkAdvice((t) => lines.push(t), 'projects', bodies, { strict: false });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^projects\[1\] \(Backend\): abbreviation "BACKEND" is 7 characters/);
    expect(lines[1]).toMatch(/^projects\[2\] \(Frontend\): abbreviation "FRONTEND" is 8 characters/);
    expect(lines.every((l) => l.endsWith('(sent anyway; --strict refuses it)'))).toBe(true);
  });

  it('strict: a usage error (exit 2) naming every offender, the field and the fix, and no warning', () => {
    const lines: string[] = [];
    let caught: unknown;
    try {
      checkAdvice((t) => lines.push(t), 'projects', bodies, { strict: true });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(UsageError);
    const err = caught as UsageError;
    expect(err.message).toContain('projects[1] (Backend)');
    expect(err.message).toContain('projects[2] (Frontend)');
    expect(err.exitCode).toBe(2);
    expect(err.field).toBe('abbreviation');
    expect(err.code).toBe('advised_against');
    expect(err.hint).toContain('--abbreviation BAC');
    expect(err.hint).toContain('nothing was sent');
    expect(lines).toHaveLength(0);
  });

  it('does nothing when every value follows the advice, strict or not', () => {
    const lines: string[] = [];
    expect(() => checkAdvice((t) => lines.push(t), 'projects', [bodies[0]!], { strict: true })).not.toThrow();
    checkAdvice((t) => lines.push(t), 'projects', [bodies[0]!], { strict: false });
    expect(lines).toHaveLength(0);
  });
});

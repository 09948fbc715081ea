import { describe, expect, it } from 'vitest';
import { adviceFor } from '@opsctl/shared/tracker/advice.js';
import { startMock } from '../helpers/mock.js';
import { useTrackerMock } from '../helpers/tracker.js';

/**
 * Seed 001 (and the contract's description): a project abbreviation "should be kept to 3 characters at
 * most". The service accepts up to 63, so the CLI warns naming the field and the rule, and with --strict
 * refuses before sending; the mock takes it as the service does, and refuses it when started strict.
 */
const t = useTrackerMock();

describe('a project abbreviation over 3 characters', () => {
  it('create: a warning naming the field and the rule, and the project is made (the service takes it)', async () => {
    const r = await t.cli('tracker', 'projects', 'create', '--name', 'Backend', '--team-id', '1', '--abbreviation', 'BACKEND', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('abbreviation "BACKEND" is 7 characters');
    expect(r.stderr).toContain('should be kept to 3 characters at most');
    expect(r.json<{ abbreviation: string }>().abbreviation).toBe('BACKEND');
  });

  it('--strict: refused before anything is sent (exit 2), the fix named', async () => {
    t.mock.requests.length = 0;
    const r = await t.cli('tracker', 'projects', 'create', '--name', 'Strict', '--team-id', '1', '--abbreviation', 'BACKEND', '--strict');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('abbreviation "BACKEND" is 7 characters');
    expect(r.stderr).toContain('--abbreviation BAC');
    expect(t.mock.requests.filter((q) => q.method === 'POST')).toHaveLength(0);
  });

  it('update: the same warning; 3 characters or fewer say nothing', async () => {
    const p = (await t.json('tracker', 'projects', 'create', '--name', 'Quiet', '--team-id', '1', '--abbreviation', 'QT')) as { id: number };
    const short = await t.cli('tracker', 'projects', 'update', String(p.id), '--abbreviation', 'QTE');
    expect(short.code, short.stderr).toBe(0);
    expect(short.stderr).not.toContain('abbreviation');
    const long = await t.cli('tracker', 'projects', 'update', String(p.id), '--abbreviation', 'QUIET');
    expect(long.code).toBe(0);
    expect(long.stderr).toContain('abbreviation "QUIET" is 5 characters');
  });

  it('the mock takes it like the service, and with --tracker-strict answers 422 naming the field', async () => {
    const strict = await startMock({ services: ['tracker'], options: { tracker: { strict: true } } });
    try {
      const post = (abbreviation: string) =>
        fetch(`${strict.url}/api/v3/projects`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'shortcut-token': strict.trackerToken },
          body: JSON.stringify({ name: `P ${abbreviation}`, team_id: 1, abbreviation }),
        });
      const refused = await post('BACKEND');
      expect(refused.status).toBe(422);
      expect(JSON.stringify(await refused.json())).toContain('abbreviation');
      expect((await post('BE')).status).toBe(201);
    } finally {
      await strict.close();
    }
    expect(adviceFor('projects', { abbreviation: 'ABCD' })).toHaveLength(1);
    expect(adviceFor('projects', { abbreviation: 'ABC' })).toEqual([]);
    expect(adviceFor('labels', { abbreviation: 'ABCD' })).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { useTrackerMock } from '../helpers/tracker.js';

/**
 * gh's --web: `tracker <resource> get ID --web` opens the record's own page (its app_url) in the system
 * browser and says so on stderr; where no browser can open it (no display, or the opener fails) it exits 1
 * with the address on stdout for copying, never claiming to open it.
 */
const t = useTrackerMock();

describe('tracker … get --web', () => {
  it('a story, an epic and a label open their app_url in the browser; nothing on stdout', async () => {
    const story = (await t.json('tracker', 'stories', 'create', '--name', 'Open me')) as { id: number; app_url: string };
    const epic = (await t.json('tracker', 'epics', 'create', '--name', 'Open me too')) as { id: number; app_url: string };
    const label = (await t.json('tracker', 'labels', 'create', '--name', 'web-label')) as { id: number; app_url: string };
    for (const [noun, rec] of [
      ['stories', story],
      ['epics', epic],
      ['labels', label],
    ] as const) {
      const opened: string[] = [];
      const r = await runCli(['tracker', noun, 'get', String(rec.id), '--web'], {
        env: { ...t.env, DISPLAY: ':0' },
        openBrowser: async (url) => (opened.push(url), true),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(opened).toEqual([rec.app_url]);
      expect(r.stderr).toContain(`Opening ${rec.app_url} in your browser`);
      expect(r.stdout).toBe('');
    }
  });

  it('the opener fails: exit 1, the address on stdout and in the hint', async () => {
    const story = (await t.json('tracker', 'stories', 'create', '--name', 'No opener')) as { id: number; app_url: string };
    const r = await runCli(['tracker', 'stories', 'get', String(story.id), '--web'], { env: { ...t.env, DISPLAY: ':0' }, openBrowser: async () => false });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout.trim()).toBe(story.app_url);
    expect(r.stderr).toContain(`no browser can open the page of story ${story.id} here: no opener could be started`);
    expect(r.stderr).toContain(`open it yourself: ${story.app_url}`);
  });

  it('no display, an SSH session or CI: nothing is launched, exit 1, the address for copying (in the error with --json)', async () => {
    const story = (await t.json('tracker', 'stories', 'create', '--name', 'Over SSH')) as { id: number; app_url: string };
    for (const [env, reason] of [
      [{ DISPLAY: '', WAYLAND_DISPLAY: '' }, 'there is no display'],
      [{ DISPLAY: ':0', SSH_CONNECTION: '10.0.0.1 5000 10.0.0.2 22' }, 'this is an SSH session'],
      [{ DISPLAY: ':0', CI: 'true' }, 'CI is set'],
    ] as const) {
      const launched: string[] = [];
      const r = await runCli(['tracker', 'stories', 'get', String(story.id), '--web'], {
        env: { ...t.env, ...env },
        openBrowser: async (url) => (launched.push(url), true),
      });
      expect(r.code, r.stderr).toBe(1);
      expect(launched).toEqual([]);
      expect(r.stdout.trim()).toBe(story.app_url);
      expect(r.stderr).toContain(reason);
      expect(r.stderr).not.toContain('Opening');
    }
    const json = await runCli(['tracker', 'stories', 'get', String(story.id), '--web', '--json'], { env: { ...t.env, DISPLAY: '' } });
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'no_browser', url: story.app_url } });
  });
});

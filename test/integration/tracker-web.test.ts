import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { useTrackerMock } from '../helpers/tracker.js';

/**
 * gh's --web: `tracker <resource> get ID --web` opens the record's own page (its app_url) in the system
 * browser and says so on stderr; with no browser it prints the address on stdout and still exits 0.
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
      const r = await runCli(['tracker', noun, 'get', String(rec.id), '--web'], { env: t.env, openBrowser: async (url) => (opened.push(url), true) });
      expect(r.code, r.stderr).toBe(0);
      expect(opened).toEqual([rec.app_url]);
      expect(r.stderr).toContain(`Opening ${rec.app_url} in your browser`);
      expect(r.stdout).toBe('');
    }
  });

  it('no browser here: the address on stdout, exit 0', async () => {
    const story = (await t.json('tracker', 'stories', 'create', '--name', 'Over SSH')) as { id: number; app_url: string };
    const r = await runCli(['tracker', 'stories', 'get', String(story.id), '--web'], { env: t.env, openBrowser: async () => false });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(story.app_url);
    expect(r.stderr).toContain('No browser could be opened here');
  });
});

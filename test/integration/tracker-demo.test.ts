import { describe, expect, it } from 'vitest';
import { DEMO_SECTIONS } from '../../src/commands/demo/steps.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';

/** The demo's workflow section, step by step, against the embedded profile (in-process mock, state in the config dir). */
describe('demo: a story through its workflow with the label stats following', () => {
  it('runs every step with its expected exit code, and the stats move with the story', async () => {
    const cfg = tempConfigDir();
    try {
      const section = DEMO_SECTIONS.find((s) => s.job.startsWith('tracker: a story moves'));
      expect(section).toBeDefined();
      const env = { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' };
      const vars: Record<string, string> = {};
      const stats: Array<Record<string, number>> = [];
      const errs: string[] = [];
      for (const step of section!.steps) {
        const argv = typeof step.argv === 'function' ? step.argv(vars) : step.argv;
        const r = await runCli(argv, { env, stdin: step.stdin });
        expect({ step: step.title, code: r.code, stderr: r.stderr }).toMatchObject({ code: (step.expect ?? [0])[0] });
        step.capture?.(r.stdout, vars);
        if (argv[1] === 'labels' && argv[2] === 'get') stats.push(JSON.parse(r.stdout).stats);
        errs.push(r.stderr);
      }
      expect(stats.map((s) => [s.num_stories_unstarted, s.num_stories_in_progress, s.num_stories_completed])).toEqual([
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [1, 1, 1],
      ]);
      expect(stats[2]?.num_points_completed).toBe(3);
      expect(errs.join('\n')).toContain('0 to create');
    } finally {
      cfg.cleanup();
    }
  });
});

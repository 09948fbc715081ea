import { describe, expect, it } from 'vitest';
import { DEMO_SECTIONS } from '../../src/commands/demo/steps.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';

/** The demo's kv section, step by step: the whole ladder 3.2 → 3.7 on simulated members (no real etcd needed). */
describe('demo: the kv upgrade ladder 3.2 → 3.7 of a simulated sandbox', () => {
  it('runs every step; the plan shows the five hops with their checks, the members end on 3.7 with the key', async () => {
    const cfg = tempConfigDir('opsctl-kv-demo-');
    const section = DEMO_SECTIONS.find((s) => s.job.startsWith('kv: the upgrade ladder 3.2 → 3.7'));
    expect(section).toBeDefined();
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1', NO_COLOR: '1' };
    const out: Record<string, string> = {};
    try {
      for (const step of section!.steps) {
        const argv = typeof step.argv === 'function' ? step.argv({}) : step.argv;
        const r = await runCli(argv, { env, stdin: step.stdin });
        expect({ step: step.title, code: r.code, stderr: r.stderr }).toMatchObject({ code: (step.expect ?? [0])[0] });
        out[argv.slice(0, 2).join(' ') + (argv.includes('--dry-run') ? ' plan' : '')] = `${r.stdout}\n${r.stderr}`;
      }
      const plan = out['kv upgrade plan']!;
      expect(plan).toMatch(/Ladder: 3\.2 → 3\.7 in 5 hops/);
      for (const hop of ['3.2 → 3.3', '3.3 → 3.4', '3.4 → 3.5', '3.5 → 3.6', '3.6 → 3.7']) expect(plan).toContain(hop);
      expect(plan).toContain('[v2store-check]');
      expect(plan).toContain('[experimental-removed]');
      expect(out['kv upgrade']).toMatch(/cluster upgraded to 3\.7 in 5 hops/);
      expect(out['kv status']).toMatch(/3\.7\.3/);
      expect(out['kv status']).not.toMatch(/3\.[2-6]\.\d/);
      expect(out['kv get']).toContain('hello from 3.2');
    } finally {
      await runCli(['kv', 'sandbox', 'down'], { env });
      cfg.cleanup();
    }
  }, 240_000);
});

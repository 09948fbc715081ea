import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';

/**
 * A container engine that fails (here `/bin/false`: what a stopped podman service, a missing socket or a broken
 * engine install looks like to opsctl) is the environment's problem, said with the engine's command and where to
 * look, exit 1: never "unexpected error", which is reserved for opsctl's own bugs.
 */
describe('a failing container engine is said as such (EngineError is an OpsError)', () => {
  const cfg = tempConfigDir('opsctl-engine-errors-');
  afterAll(() => cfg.cleanup());

  it('kv backups prune: the engine command that failed and the hint; no "unexpected error"', async () => {
    const file = join(cfg.dir, 'cluster.yaml');
    writeFileSync(
      file,
      [
        'members:',
        '  - { name: c1, endpoint: "http://127.0.0.1:9", container: etcd-c1 }',
        'driver:',
        '  type: container',
        '  engine: /bin/false',
        '  images: { "3.6": "localhost/etcd:v3.6.16" }',
        '',
      ].join('\n'),
    );
    const r = await runCli(['kv', 'backups', 'prune', '--dry-run', '--cluster', file], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.stderr).toContain("`/bin/false ps --all --format '{{.Names}}\t{{.CreatedAt}}'` failed (exit 1)");
    expect(r.stderr).toContain("the container engine's words above say what failed");
    const j = await runCli(['kv', 'backups', 'prune', '--dry-run', '--json', '--cluster', file], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
    expect(JSON.parse(j.stderr.trim().split('\n').pop()!)).toMatchObject({ error: { code: 'engine' } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBin } from '../helpers/bin.js';
import { startMock } from '../helpers/mock.js';

/** The built binary (bundled dependencies: yaml, undici's FormData) against a mock on port 0. */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-tracker-'));
  env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.trackerToken };
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('opsctl tracker (built binary)', () => {
  it('applies a YAML file, then finds nothing to do', async () => {
    const f = join(dir, 'labels.yaml');
    writeFileSync(f, 'labels:\n  - name: e2e-bug\n    color: "#d73a4a"\n  - name: e2e-old\n    archived: true\n');
    const first = await runBin(['tracker', 'labels', 'apply', '-f', f], { env });
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(/^create\te2e-bug/m);
    const again = await runBin(['tracker', 'labels', 'apply', '-f', f], { env });
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain('nothing to do');
  });

  it('uploads 5 files in 2 multipart requests', async () => {
    const files = Array.from({ length: 5 }, (_, i) => {
      const p = join(dir, `up${i}.txt`);
      writeFileSync(p, `file ${i}`);
      return p;
    });
    mock.requests.length = 0;
    const r = await runBin(['tracker', 'files', 'upload', ...files, '--json', 'name,size'], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual(files.map((_, i) => ({ name: `up${i}.txt`, size: 6 })));
    expect(mock.requests.filter((q) => q.path === '/api/v3/files')).toHaveLength(2);
  });

  it('searches every page with --all', async () => {
    for (let i = 0; i < 3; i++) await runBin(['tracker', 'stories', 'create', '--name', `e2e needle ${i}`], { env });
    const r = await runBin(['tracker', 'search', 'stories', '--query', 'e2e needle', '--page-size', '2', '--all', '--json', 'name'], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(String(r.stdout)).map((s: any) => s.name)).toEqual(['e2e needle 0', 'e2e needle 1', 'e2e needle 2']);
  });
});

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/gen-tracker-contract.mjs');

// the generator runs as its own process (the integration tier); the contract's content is checked in test/unit/tracker-contract.test.ts
describe('the generated tracker contract (packages/shared/src/tracker) is current', () => {
  it('is current: the generator in --check mode finds nothing to rewrite', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('a change to the overrides makes the committed files stale, named with the fix', () => {
    // a copy of the repository's inputs in a scratch tree, so the real files are never touched
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-contract-'));
    try {
      for (const d of ['scripts', 'packages/shared/src/tracker/resources']) execFileSync('mkdir', ['-p', join(dir, d)]);
      for (const f of [
        'scripts/gen-tracker-contract.mjs',
        'scripts/tracker-table.mjs',
        'packages/shared/src/tracker/openapi.json',
        'packages/shared/src/tracker/overrides.json',
        'packages/shared/src/tracker/contract.ts',
        'packages/shared/src/tracker/types.ts',
        'packages/shared/src/tracker/flags.ts',
        'packages/shared/src/tracker/resources.yaml',
        'packages/shared/src/tracker/resources.ts',
        'packages/shared/src/tracker/resource-index.ts',
        ...readdirSync(join(ROOT, 'packages/shared/src/tracker/resources')).map((f) => `packages/shared/src/tracker/resources/${f}`),
        '.prettierrc.json',
      ])
        copyFileSync(join(ROOT, f), join(dir, f));
      execFileSync('ln', ['-s', join(ROOT, 'node_modules'), join(dir, 'node_modules')]);
      const ov = JSON.parse(readFileSync(join(dir, 'packages/shared/src/tracker/overrides.json'), 'utf8'));
      ov.fields[0].to = 'avatar_digest';
      writeFileSync(join(dir, 'packages/shared/src/tracker/overrides.json'), JSON.stringify(ov));
      const r = spawnSync(process.execPath, [join(dir, 'scripts/gen-tracker-contract.mjs'), '--check'], { cwd: dir, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('stale: packages/shared/src/tracker/contract.ts, packages/shared/src/tracker/types.ts; run npm run gen:contract');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { execa } from 'execa';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'opsctl-lock-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm install on a fresh clone', () => {
  it('leaves package-lock.json as committed (the lock file matches package.json)', { timeout: 180_000 }, async () => {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(REPO, f), join(work, f));
    // the workspace packages' manifests (packages/mock, packages/shared): the lock file names them
    for (const pkg of readdirSync(join(REPO, 'packages'))) {
      mkdirSync(join(work, 'packages', pkg), { recursive: true });
      copyFileSync(join(REPO, 'packages', pkg, 'package.json'), join(work, 'packages', pkg, 'package.json'));
    }
    // what `npm install` would write to the lock file, without installing anything
    const r = await execa('npm', ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: work,
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(work, 'package-lock.json'), 'utf8')).toBe(readFileSync(join(REPO, 'package-lock.json'), 'utf8'));
  });
});

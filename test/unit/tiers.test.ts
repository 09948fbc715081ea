import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const UNIT = fileURLToPath(new URL('.', import.meta.url));

/**
 * The unit tier stays fast on a busy machine: none of its files starts the built binary, a live mock, etcd,
 * a browser or a child process pool (those tests live in test/integration or test/e2e).
 */
it('no unit test starts the binary, a live mock, etcd, a browser or a child process', () => {
  const heavy =
    /from 'execa'|helpers\/(bin|mock|kv|etcd-cluster|chromium|sshd|netns|pty|serve|oidc-provider)\.js'|from 'node:child_process'|(?<![.\w])(spawn|spawnSync|exec|execSync|execFile|execFileSync|fork)\(|playwright/;
  const offenders = readdirSync(UNIT, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && f !== 'tiers.test.ts')
    .filter((f) => heavy.test(readFileSync(join(UNIT, f), 'utf8')));
  expect(offenders).toEqual([]);
});

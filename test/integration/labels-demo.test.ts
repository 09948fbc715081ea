import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_SECTIONS } from '../../src/commands/demo/steps.js';
import { FileStore } from '@opsctl/mock/store.js';
import { mintAccessToken } from '@opsctl/mock/services/oauth/tokens.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { LABEL_SCOPES } from '../helpers/labels.js';

/**
 * The demo's label-service section, step by step, against the embedded profile (in-process mock with
 * its state in the config dir). In the real demo the login section leaves a stored token; here a token
 * is minted into the embedded state and handed over with OPSCTL_ACCESS_TOKEN.
 */
let cfg: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  cfg = tempConfigDir();
});
afterEach(() => cfg.cleanup());

describe('demo: label service section', () => {
  it('runs every step with its expected exit code against the embedded mock', async () => {
    const section = DEMO_SECTIONS.find((s) => s.job.startsWith('label service'));
    expect(section).toBeDefined();
    mkdirSync(join(cfg.dir, 'data'), { recursive: true });
    const store = new FileStore(join(cfg.dir, 'data', 'mock-state.json'));
    const token = await store.write(
      (s) => mintAccessToken(s, { client_id: 'demo', sub: 'ada', email: 'ada@example.com', scopes: [LABEL_SCOPES.rw], ttlSeconds: 3600 }, Date.now()).token,
    );
    await store.close();
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_ACCESS_TOKEN: token, CI: '1' };
    const vars: Record<string, string> = {};
    const outputs: string[] = [];
    for (const step of section!.steps) {
      const argv = typeof step.argv === 'function' ? step.argv(vars) : step.argv;
      const r = await runCli(argv, { env, stdin: step.stdin });
      expect({ step: step.title, code: r.code, stderr: r.stderr }).toMatchObject({ code: (step.expect ?? [0])[0] });
      step.capture?.(r.stdout, vars);
      outputs.push(r.stdout);
    }
    expect(vars.labelsId).toMatch(/^[0-9a-f]+$/);
    expect(outputs[4]).toContain('nothing to send');
  });
});

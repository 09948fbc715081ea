import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedLabels, startupRatios, VERBS } from '../../scripts/bench/startup-table.mjs';
import { BIN } from '../helpers/bin.js';

const cfg = mkdtempSync(join(tmpdir(), 'opsctl-ratios-'));
afterAll(() => rmSync(cfg, { recursive: true, force: true }));

// A regression guard, not the figures: `npm run bench` measures the real ratios (15 rounds, budgets 1.1x for
// help and 1.3x for every other verb). Here 3 interleaved rounds of CPU time (not wall time) against
// `node -e 0`, each verb held to 3x: a busy machine slows both sides of a ratio alike, while a start-up path
// that loads the whole CLI again (the tree for a help, the schema library, undici for an embedded list) shows.
describe('start-up CPU of each verb of the bench stays within 3x of node -e 0', () => {
  it('npm launcher: --version, the help texts and an embedded list', () => {
    embeddedLabels(BIN, cfg);
    const { baseMs, rows } = startupRatios({ launchers: { npm: [process.execPath, BIN] }, verbs: VERBS, rounds: 3, env: { OPSCTL_CONFIG_DIR: cfg } });
    expect(baseMs).toBeGreaterThan(0);
    for (const row of rows) expect(row.launchers.npm!.ratio, `${row.name}: ${row.launchers.npm!.ratio.toFixed(2)}x`).toBeLessThanOrEqual(3);
  }, 120_000);
});

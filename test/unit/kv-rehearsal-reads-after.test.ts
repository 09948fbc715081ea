import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import { readsAfter, type EarlyRehearsal } from '../../src/kv/ladder/rehearsal.js';
import type { LadderOptions } from '../../src/kv/ladder/record.js';
import { keepVerdict, verdictPath } from '../../src/kv/rehearsal/verdict.js';

/**
 * When the plan's reads of the members' data (etcdutl, the leader's snapshot) begin beside a rehearsal:
 * once its copy is whole (not to lengthen the members' pause), except where a kept verdict of the cluster,
 * young enough to be reused, is there: then at once, not after the verdict's fingerprint (every member's
 * start settings read again) decides it.
 */
const root = mkdtempSync(join(tmpdir(), 'opsctl-reads-after-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const NOW = Date.parse('2026-11-29T06:00:00Z');
const cluster: ClusterSpec = { source: 'file', key: 'c1', members: [{ name: 'kv1', endpoint: 'http://127.0.0.1:2379' }] };
const driver = { type: 'command', clonable: () => ({ paths: [], pause: [] }) } as unknown as MemberDriver;
const opts = (dataDir: string, more: Partial<LadderOptions> = {}) =>
  ({ cluster, driver, dataDir, now: () => NOW, rehearse: () => Promise.reject(new Error('not run here')), ...more }) as unknown as LadderOptions;

/** A rehearsal being begun whose fingerprint (and copy) never come: what waits on it, waits for good. */
const never = new Promise<EarlyRehearsal | undefined>(() => undefined);
/** 'begun' once `p` resolves (awaited without a deadline: a wait for good fails the test by its own timeout); 'waiting' only while it has not. */
const begins = (p: Promise<void>) => p.then(() => 'begun');
const waits = (p: Promise<void>) => Promise.race([p.then(() => 'begun'), new Promise((r) => setTimeout(() => r('waiting'), 50))]);

describe('the reads of the members’ data beside the rehearsal', () => {
  it('a kept verdict within --rehearsal-valid: the reads begin at once', async () => {
    const dir = join(root, 'kept');
    keepVerdict(verdictPath(dir, 'c1'), { at: new Date(NOW - 60_000).toISOString(), hops: '3.5 → 3.6', fingerprint: 'f', ms: 1 });
    expect(await begins(readsAfter(opts(dir), never))).toBe('begun');
    // (past its validity, or asked to rehearse again: the rehearsal's copy comes first)
    expect(await waits(readsAfter(opts(dir, { rehearsalValidMs: 30_000 }), never))).toBe('waiting');
    expect(await waits(readsAfter(opts(dir, { rehearseOnly: true }), never))).toBe('waiting');
  });

  it('no kept verdict: after the rehearsal’s copy is whole', async () => {
    let whole!: () => void;
    const copied = new Promise<void>((r) => (whole = r));
    const reads = readsAfter(opts(join(root, 'none')), Promise.resolve({ names: '3.5 → 3.6', copied, cancel: () => Promise.resolve() }));
    expect(await waits(reads)).toBe('waiting');
    whole();
    expect(await begins(reads)).toBe('begun');
  });

  it('a rehearsal that fails to begin: the reads begin (its error is begun()’s to throw, never an unhandled rejection here)', async () => {
    const failing = Promise.reject(new Error('its settings could not be read'));
    expect(await begins(readsAfter(opts(join(root, 'none')), failing))).toBe('begun');
  });

  it('a dry run copies nothing: at once', async () => {
    expect(await begins(readsAfter(opts(join(root, 'none'), { dryRun: true }), never))).toBe('begun');
  });
});

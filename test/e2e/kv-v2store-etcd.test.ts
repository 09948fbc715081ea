import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';

/**
 * The 3.5 → 3.6 hop on real etcd 3.5.35 whose members hold custom v2 content (a v2 key put through
 * --enable-v2): `etcdutl check v2store` fails on every member, and the upgrade is refused before
 * anything stops, naming each member, what etcdutl said and the guide's fix.
 */
const BUILDS = process.env.OPSCTL_ETCD_BUILDS ?? '/var/tmp/opsctl-etcd-builds';
const v35 = process.env.OPSCTL_ETCD_35_DIR ?? join(BUILDS, 'etcd-v3.5.35-linux-amd64');
const v36 = process.env.OPSCTL_ETCD_36_DIR ?? join(BUILDS, 'etcd-v3.6.16-linux-amd64');
const ready = existsSync(join(v35, 'etcdutl')) && existsSync(join(v36, 'etcd'));
if (!ready) {
  const why = `missing etcd 3.5 (${v35}) or 3.6 (${v36}): build them with scripts/etcd-build.sh`;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd 3.5/3.6 are required (OPSCTL_REQUIRE_E2E=1): ${why}`);
  process.stderr.write(`\n*** SKIPPING the real etcd v2store check: ${why} ***\n\n`);
}

describe.runIf(ready)('kv upgrade --to 3.6: etcdutl check v2store on real 3.5.35 members (the built binary)', () => {
  const cfg = tempConfigDir('opsctl-v2store-e2e-');
  const opsctl = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true, timeout: 240_000 });
  afterAll(async () => {
    await opsctl('kv', 'sandbox', 'down');
    cfg.cleanup();
  });

  it('custom v2 content in the WAL: refused before any stop, naming each member, what etcdutl said and the --snapshot-count=1 fix', async () => {
    const up = await opsctl('kv', 'sandbox', 'up', '--members', '3', '--etcd-bin', v35, '--config', 'enable-v2=true');
    expect(up.exitCode, String(up.stderr)).toBe(0);
    const status = JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ endpoint: string; id: string }>;
    const endpoint = status[0]!.endpoint;
    // a v2 key, put and deleted through the v2 API: custom v2 entries in every member's WAL
    expect((await fetch(`${endpoint}/v2/keys/legacy`, { method: 'PUT', body: new URLSearchParams({ value: 'old' }) })).status).toBe(201);
    expect((await fetch(`${endpoint}/v2/keys/legacy`, { method: 'DELETE' })).status).toBe(200);

    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', v36);
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    for (const m of ['kv1', 'kv2', 'kv3']) {
      expect(err).toMatch(
        new RegExp(
          `\\[v2store-check\\] member ${m}: etcdutl check v2store: Error: detected custom v2 content in WAL records; fix: restart ${m} once on 3\\.5 with --snapshot-count=1`,
        ),
      );
    }
    expect(err).toContain('nothing was stopped or changed');
    // nothing stopped: every member still runs 3.5.35 under the same id
    const after = JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ id: string; version: string }>;
    expect(after.map((m) => m.id)).toEqual(status.map((m) => m.id));
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((m) => m.server)).toEqual(['3.5.35', '3.5.35', '3.5.35']);
  }, 300_000);
});

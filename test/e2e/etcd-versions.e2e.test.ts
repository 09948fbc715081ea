import { afterAll, describe, expect, it } from 'vitest';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { until } from '../helpers/kv.js';

const dirs = etcdLadderDirs();

/**
 * Every release of the ladder really runs here: each starts as a 1-member cluster on loopback, takes a
 * key through its own etcdctl, and answers /version, /health and its JSON gateway in the shape the kv
 * code reads per version (recorded here so a new release that changes a shape fails loudly).
 */
describe.runIf(dirs)('real etcd 3.2 … 3.7 (the ladder binaries: 1-member clusters on loopback)', () => {
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
  });

  const releases = [
    // gateways: which JSON gateway prefixes serve /kv/range (measured: 3.5, 3.6 and 3.7 still serve /v3beta).
    { minor: '3.2', dir: dirs?.v32 ?? '', version: '3.2.32', gateways: ['/v3alpha'] },
    { minor: '3.3', dir: dirs?.v33 ?? '', version: '3.3.27', gateways: ['/v3alpha', '/v3beta'] },
    { minor: '3.4', dir: dirs?.v34 ?? '', version: /^3\.4\.\d+$/, gateways: ['/v3beta', '/v3'] },
    { minor: '3.5', dir: dirs?.v35 ?? '', version: PINNED_ETCD['3.5'], gateways: ['/v3beta', '/v3'] },
    { minor: '3.6', dir: dirs?.v36 ?? '', version: PINNED_ETCD['3.6'], gateways: ['/v3beta', '/v3'] },
    { minor: '3.7', dir: dirs?.v37 ?? '', version: PINNED_ETCD['3.7'], gateways: ['/v3beta', '/v3'] },
  ];
  /** 3.6 and later: /version adds the storage version, /health a reason, /livez exists (3.5 has the last two). */
  const from = (m: string, at: string) => Number(m.split('.')[1]) >= Number(at.split('.')[1]);

  it.each(releases)(
    'etcd $minor: starts, puts and gets through etcdctl, and /version + /health have its shape',
    async (r) => {
      const c = await startCluster({ members: 'real', size: 1 });
      clusters.push(c);
      const m = c.members[0]!;
      c.real.start(m, r.dir);
      await until(
        () => {
          try {
            c.real.etcdctl(r.dir, ['get', 'probe']);
            return true;
          } catch {
            return false;
          }
        },
        120_000,
        `etcd ${r.minor} healthy`,
      );
      c.real.etcdctl(r.dir, ['put', 'ladder/key', `value-${r.minor}`]);
      expect(c.real.etcdctl(r.dir, ['get', 'ladder/key', '--print-value-only']).trim()).toBe(`value-${r.minor}`);

      const version = (await (await fetch(`${m.clientUrl}/version`)).json()) as Record<string, string>;
      if (typeof r.version === 'string') expect(version.etcdserver).toBe(r.version);
      else expect(version.etcdserver).toMatch(r.version);
      expect(version.etcdcluster).toBe(`${r.minor}.0`);
      // 3.6 adds the storage version; before it /version has exactly the two fields (3.7: the same three).
      expect(Object.keys(version).sort()).toEqual(from(r.minor, '3.6') ? ['etcdcluster', 'etcdserver', 'storage'] : ['etcdcluster', 'etcdserver']);
      if (from(r.minor, '3.6')) expect(version.storage).toBe(`${r.minor}.0`);

      const health = await fetch(`${m.clientUrl}/health`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as Record<string, unknown>;
      // "true" as a string in every version; 3.5 and later add an empty reason.
      expect(body).toEqual(from(r.minor, '3.5') ? { health: 'true', reason: '' } : { health: 'true' });
      // /livez and /readyz exist from 3.5 on (plain "ok").
      const livez = await fetch(`${m.clientUrl}/livez`);
      expect(livez.status).toBe(from(r.minor, '3.5') ? 200 : 404);
      // 3.6 and later: the status says the storage version and the downgrade (empty: none in progress); v2 is gone
      if (from(r.minor, '3.6')) {
        const status = (await (await fetch(`${m.clientUrl}/v3/maintenance/status`, { method: 'POST', body: '{}' })).json()) as Record<string, unknown>;
        expect(status).toMatchObject({ version: version.etcdserver, storageVersion: `${r.minor}.0`, downgradeInfo: {} });
        expect((await fetch(`${m.clientUrl}/v2/keys`)).status).toBe(404);
      }

      // The JSON gateway: each version's prefixes read the key (base64 key and value); the others are 404.
      for (const prefix of ['/v3alpha', '/v3beta', '/v3']) {
        const range = await fetch(`${m.clientUrl}${prefix}/kv/range`, {
          method: 'POST',
          body: JSON.stringify({ key: Buffer.from('ladder/key').toString('base64') }),
        });
        expect(`${prefix} ${range.status}`).toBe(`${prefix} ${r.gateways.includes(prefix) ? 200 : 404}`);
        if (range.status !== 200) continue;
        const kvs = ((await range.json()) as { kvs?: { value: string }[] }).kvs ?? [];
        expect(Buffer.from(kvs[0]?.value ?? '', 'base64').toString()).toBe(`value-${r.minor}`);
      }
      await c.destroy();
    },
    180_000,
  );
});

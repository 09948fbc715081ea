import { afterAll, describe, expect, it } from 'vitest';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { realCluster, type RealCluster } from '../helpers/etcd-cluster.js';
import { until } from '../helpers/kv.js';

const dirs = etcdLadderDirs();

/**
 * Every release of the ladder really runs here: each starts as a 1-member cluster on loopback, takes a
 * key through its own etcdctl, and answers /version, /health and its JSON gateway in the shape the kv
 * code reads per version (recorded here so a new release that changes a shape fails loudly).
 */
describe.runIf(dirs)('real etcd 3.2 … 3.6 (the ladder binaries: 1-member clusters on loopback)', () => {
  const clusters: RealCluster[] = [];
  afterAll(() => {
    for (const c of clusters) c.destroy();
  });

  const releases = [
    // gateways: which JSON gateway prefixes serve /kv/range (measured: 3.5 and 3.6 still serve /v3beta).
    { minor: '3.2', dir: dirs?.v32 ?? '', version: '3.2.32', gateways: ['/v3alpha'] },
    { minor: '3.3', dir: dirs?.v33 ?? '', version: '3.3.27', gateways: ['/v3alpha', '/v3beta'] },
    { minor: '3.4', dir: dirs?.v34 ?? '', version: /^3\.4\.\d+$/, gateways: ['/v3beta', '/v3'] },
    { minor: '3.5', dir: dirs?.v35 ?? '', version: PINNED_ETCD['3.5'], gateways: ['/v3beta', '/v3'] },
    { minor: '3.6', dir: dirs?.v36 ?? '', version: PINNED_ETCD['3.6'], gateways: ['/v3beta', '/v3'] },
  ];

  it.each(releases)(
    'etcd $minor: starts, puts and gets through etcdctl, and /version + /health have its shape',
    async (r) => {
      const c = await realCluster({ size: 1 });
      clusters.push(c);
      const m = c.members[0]!;
      c.start(m, r.dir);
      await until(
        () => {
          try {
            c.etcdctl(r.dir, ['get', 'probe']);
            return true;
          } catch {
            return false;
          }
        },
        120_000,
        `etcd ${r.minor} healthy`,
      );
      c.etcdctl(r.dir, ['put', 'ladder/key', `value-${r.minor}`]);
      expect(c.etcdctl(r.dir, ['get', 'ladder/key', '--print-value-only']).trim()).toBe(`value-${r.minor}`);

      const version = (await (await fetch(`${m.clientUrl}/version`)).json()) as Record<string, string>;
      if (typeof r.version === 'string') expect(version.etcdserver).toBe(r.version);
      else expect(version.etcdserver).toMatch(r.version);
      expect(version.etcdcluster).toBe(`${r.minor}.0`);
      // 3.6 adds the storage version; before it /version has exactly the two fields.
      expect(Object.keys(version).sort()).toEqual(r.minor === '3.6' ? ['etcdcluster', 'etcdserver', 'storage'] : ['etcdcluster', 'etcdserver']);
      if (r.minor === '3.6') expect(version.storage).toBe('3.6.0');

      const health = await fetch(`${m.clientUrl}/health`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as Record<string, unknown>;
      // "true" as a string in every version; 3.5 and 3.6 add an empty reason.
      expect(body).toEqual(r.minor === '3.5' || r.minor === '3.6' ? { health: 'true', reason: '' } : { health: 'true' });
      // /livez and /readyz exist from 3.5 on (plain "ok").
      const livez = await fetch(`${m.clientUrl}/livez`);
      expect(livez.status).toBe(r.minor === '3.5' || r.minor === '3.6' ? 200 : 404);

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
      c.destroy();
    },
    180_000,
  );
});

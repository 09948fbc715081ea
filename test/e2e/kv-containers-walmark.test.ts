import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdImages, podmanProblem, PODMAN, startCluster, type ContainerCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { ContainerDriver } from '../../src/kv/containers/driver.js';
import { walMarkOf } from '../../src/kv/wal/wal-mark.js';

const dirs = etcdLadderDirs();
const problem = dirs ? await podmanProblem() : undefined;
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman is required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container driver's host WAL mark e2e: ${problem} ***\n\n`);
}

/**
 * The put-back's guard for container members whose engine opsctl does not read here (driver.onHost: `ssh {host}
 * sudo` in production; here `env`, a prefix that runs on this machine, so the engine counts as elsewhere and
 * nothing of the member's data is read as a local path): the mark of its WAL is taken on the engine's host by
 * `sh -s` (the WAL files' names and a checksum of the newest), through the volume's Mountpoint there. It moves when
 * the member writes, and holds while it is stopped: what decides whether a data copy may go back over it.
 */
describe.runIf(Boolean(dirs) && !problem)(`the WAL mark of a container member on its engine's host, on real podman (${PINNED_ETCD['3.6']})`, () => {
  let cluster: ContainerTestCluster | undefined;
  let c: ContainerCluster;

  beforeAll(async () => {
    const images = await etcdImages(dirs!);
    cluster = await startCluster({ members: 'container', size: 1, image: images['3.6'], images: { '3.6': images['3.6'] } });
    c = cluster.container;
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
  }, 60_000);

  it('is read on the host where the engine is elsewhere: it moves with a write, and holds while the member is stopped', async () => {
    const cm = c.members[0]!;
    const m: MemberSpec = { name: cm.name, endpoint: cm.clientUrl, container: cm.container };
    const d = new ContainerDriver({ type: 'container', engine: PODMAN, onHost: 'env', images: {} }, execa, process.env);
    // nothing read here as a local path: the engine is behind a prefix
    expect(await d.dataDirs(m)).toBeUndefined();
    const first = await walMarkOf(d, m);
    expect(first).toEqual({
      digest: expect.stringMatching(/^\d+\/0000000000000000-0000000000000000\.wal\/\d+\/\d+$/),
      text: expect.stringMatching(/^1 WAL files, the newest 0000000000000000-0000000000000000\.wal with checksum \d+ \(on its host\)$/),
    });
    const put = await fetch(`${cm.clientUrl}/v3/kv/put`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from('mark/1').toString('base64'), value: Buffer.from('x').toString('base64') }),
    });
    expect(put.ok).toBe(true);
    const moved = await walMarkOf(d, m);
    expect('digest' in moved && 'digest' in first && moved.digest !== first.digest).toBe(true);
    await execa(PODMAN, ['stop', '--time', '10', cm.container]);
    const stopped = await walMarkOf(d, m);
    expect(await walMarkOf(d, m)).toEqual(stopped);
    expect('digest' in stopped).toBe(true);
  }, 300_000);
});

import { describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { RestoreRequest } from '../../src/kv/drivers/driver.js';
import type { Engine, EngineResult } from '../../src/kv/containers/engine.js';
import type { ContainerMount, ContainerSettings } from '../../src/kv/containers/settings.js';
import { checkRestore, prepareRestore, restoreData, type RestoreDriver } from '../../src/kv/containers/restore.js';

const VOLUME: ContainerMount = {
  type: 'volume',
  source: 'etcd-c1-data',
  hostPath: '/var/lib/containers/storage/volumes/etcd-c1-data/_data',
  destination: '/var/lib/etcd',
  readOnly: false,
};
const BIND: ContainerMount = { type: 'bind', source: '/srv/etcd-c1', hostPath: '/srv/etcd-c1', destination: '/etcd', readOnly: false };
const m: MemberSpec = { name: 'c1', endpoint: 'http://10.0.0.1:2379', container: 'etcd-c1' };

function container(mount: ContainerMount, etcd = '/usr/local/bin/etcd'): ContainerSettings {
  const cmd = [etcd, '--name=c1', `--data-dir=${mount.destination}`];
  return {
    ...({} as ContainerSettings),
    id: 'abc',
    name: 'etcd-c1',
    image: 'registry.example/etcd:v3.6.16',
    imageId: 'f00',
    running: false,
    restarting: false,
    created: '2026-11-28T05:00:00Z',
    entrypoint: [],
    cmd,
    argv: cmd,
    env: {},
    labels: {},
    mounts: [mount],
    opsctl: {},
  };
}

/** A driver whose engine records every call and answers as podman would for a container that is stopped. */
function fake(c: ContainerSettings, images: Record<string, string> = { '3.4': 'registry.example/etcd:v3.4.23', '3.6': 'registry.example/etcd:v3.6.16' }) {
  const calls: Array<{ words: string[]; input?: unknown }> = [];
  const ok = (words: string[], stdout = ''): EngineResult => ({ stdout, stderr: '', exitCode: 0, argv: words, timedOut: false });
  const volumes = new Map<string, string>();
  const host = async (_m: MemberSpec, words: string[], _t?: number, input?: unknown): Promise<EngineResult> => {
    calls.push({ words, ...(input ? { input } : {}) });
    if (words[0] === 'podman' && words[1] === 'volume' && words[2] === 'inspect') {
      const at = volumes.get(words[3]!);
      return at ? ok(words, JSON.stringify([{ Mountpoint: at }])) : { ...ok(words), exitCode: 125, stderr: 'Error: no such volume' };
    }
    if (words[0] === 'podman' && words[1] === 'volume' && words[2] === 'create') volumes.set(words.at(-1)!, `/vols/${words.at(-1)}/_data`);
    if (words[0] === 'podman' && words[1] === 'container' && words[2] === 'inspect') return { ...ok(words), exitCode: 125, stderr: 'Error: no such container' };
    return ok(words);
  };
  const engine = {
    program: 'podman',
    host,
    run: (mm: MemberSpec, args: string[], t?: number) => host(mm, ['podman', ...args], t),
    must: (mm: MemberSpec, args: string[], t?: number) => host(mm, ['podman', ...args], t),
    inspect: async () => c,
    stopArgs: (name: string, s: number) => ['stop', '--time', String(s), name],
  } as unknown as Engine;
  const d: RestoreDriver = {
    engine,
    containerOf: (x) => x.container ?? `etcd-${x.name}`,
    settingsSource: async () => c,
    heldStopped: () => undefined,
    imageOf: (v) => images[v],
  };
  return { d, calls, volumes };
}

const request = (version: string): RestoreRequest => ({
  snapshot: '/root/.local/share/opsctl/kv/snapshots/run-c1.db',
  name: 'c1',
  peerUrl: 'http://10.0.0.1:2380',
  initialCluster: 'c1=http://10.0.0.1:2380,c2=http://10.0.0.2:2380',
  token: 'opsctl-restore-20261128T050000-ab12',
  run: '20261128T050000-ab12',
  target: { version },
});

describe('kv restore onto container members (containers/restore.ts)', () => {
  it("builds the restored data in a volume of its own, by the target image's etcdutl beside the member's etcd, with no network, the snapshot streamed in", async () => {
    const { d, calls } = fake(container(VOLUME, '/opt/etcd/bin/etcd'));
    expect(await checkRestore(d, m, request('3.6'))).toBe(
      'data dir /var/lib/etcd (volume etcd-c1-data: /var/lib/containers/storage/volumes/etcd-c1-data/_data); restored by /opt/etcd/bin/etcdutl of registry.example/etcd:v3.6.16 beside it, its contents then kept in volume etcd-c1.opsctl-before-restore-20261128T050000-ab12',
    );
    await prepareRestore(d, m, request('3.6'));
    const place = 'etcd-c1.opsctl-restore-20261128T050000-ab12';
    expect(calls.find((c) => c.words[2] === 'create')?.words).toEqual([
      'podman',
      'volume',
      'create',
      '--label',
      'io.opsctl.member=c1',
      '--label',
      expect.stringMatching(/^io\.opsctl\.backup-of=/),
      place,
    ]);
    const receive = calls.find((c) => c.input);
    expect(receive).toMatchObject({
      words: ['sh', '-c', expect.stringContaining('cat > "$p/snapshot.db"'), 'sh', `/vols/${place}/_data`],
      input: { file: request('3.6').snapshot },
    });
    const run = calls.find((c) => c.words[1] === 'run')!.words;
    expect(run).toEqual([
      'podman',
      'run',
      '--rm',
      '--network',
      'none',
      '--user',
      '0:0',
      '--volume',
      `${place}:/opsctl-restore`,
      '--entrypoint',
      '/opt/etcd/bin/etcdutl',
      'registry.example/etcd:v3.6.16',
      'snapshot',
      'restore',
      '/opsctl-restore/snapshot.db',
      '--name',
      'c1',
      '--initial-cluster',
      'c1=http://10.0.0.1:2380,c2=http://10.0.0.2:2380',
      '--initial-cluster-token',
      'opsctl-restore-20261128T050000-ab12',
      '--initial-advertise-peer-urls',
      'http://10.0.0.1:2380',
      '--data-dir',
      '/opsctl-restore/data',
    ]);
    // the restored data then owned as the member's data is
    expect(calls.at(-1)?.words).toEqual(['sh', '-c', expect.stringContaining('chown -R --reference="$ref"'), 'sh', `/vols/${place}/_data`, VOLUME.hostPath]);
  });

  it("3.4 restores with the image's etcdctl (ETCDCTL_API=3); a bind-mounted member builds beside its data; no image for the version: refused before anything", async () => {
    const { d, calls } = fake(container(BIND));
    await prepareRestore(d, m, request('3.4'));
    const run = calls.find((c) => c.words[1] === 'run')!.words;
    expect(run.slice(0, 13)).toEqual([
      'podman',
      'run',
      '--rm',
      '--network',
      'none',
      '--user',
      '0:0',
      '--env',
      'ETCDCTL_API=3',
      '--volume',
      '/srv/etcd-c1.opsctl-restore-20261128T050000-ab12:/opsctl-restore',
      '--entrypoint',
      '/usr/local/bin/etcdctl',
    ]);
    expect(calls.some((c) => c.words.includes('create'))).toBe(false);
    await expect(checkRestore(fake(container(VOLUME), {}).d, m, request('3.6'))).rejects.toThrow(
      'member c1: no image for 3.6 in driver.images of the cluster file: add "3.6": IMAGE',
    );
  });

  it('with the members stopped: the data it had kept in a place of its own, the restored data put in the data dir, its place removed; gone before: said, never guessed', async () => {
    const { d, calls, volumes } = fake(container(VOLUME));
    volumes.set('etcd-c1.opsctl-restore-20261128T050000-ab12', '/vols/r/_data');
    const said = await restoreData(d, m, request('3.6'));
    expect(said).toBe(
      `data dir ${VOLUME.hostPath} restored from volume etcd-c1.opsctl-restore-20261128T050000-ab12 (removed after), the data it had kept in volume etcd-c1.opsctl-before-restore-20261128T050000-ab12`,
    );
    const put = calls.find((c) => c.words[0] === 'sh' && String(c.words[2]).includes('mv -t "$failed"'))!.words;
    expect(put.slice(4)).toEqual([VOLUME.hostPath, '/vols/r/_data/data', '/vols/etcd-c1.opsctl-before-restore-20261128T050000-ab12/_data']);
    expect(calls.at(-1)?.words).toEqual(['podman', 'volume', 'rm', 'etcd-c1.opsctl-restore-20261128T050000-ab12']);
    await expect(restoreData(fake(container(VOLUME)).d, m, request('3.6'))).rejects.toThrow(
      "c1's restored data ({run} 20261128T050000-ab12) is not there: no volume etcd-c1.opsctl-restore-20261128T050000-ab12; run the same command to build it again",
    );
  });
});

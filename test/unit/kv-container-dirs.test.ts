import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { ContainerDriver } from '../../src/kv/containers/driver.js';
import { COPY_SCRIPT, RESTORE_SCRIPT } from '../../src/kv/containers/backup.js';
import { placeDirs } from '../../src/kv/containers/dirs.js';
import { onThisMachine } from '../../src/kv/containers/engine.js';
import { parseInspect } from '../../src/kv/containers/settings.js';
import { walMarkOf, type WalMark } from '../../src/kv/wal/wal-mark.js';
import { field, frame, v3Put } from '../helpers/wal-bytes.js';
import { bind, container, fakeEngine, ok, volume, VOLUMES } from '../helpers/fake-engine.js';

const m: MemberSpec = { name: 'c1', endpoint: 'http://127.0.0.1:2379', container: 'etcd-c1' };
const RUN = '20261127T160040-ab12cd';

/** A driver on the fake engine; `said` collects its debug lines. */
function driverOn(e: ReturnType<typeof fakeEngine>, spec: { engine?: string; onHost?: string } = {}, env: NodeJS.ProcessEnv = {}) {
  const said: string[] = [];
  const d = new ContainerDriver(
    { type: 'container', engine: spec.engine ?? 'podman', images: {}, ...(spec.onHost ? { onHost: spec.onHost } : {}) },
    e.run,
    env,
    (l) => said.push(l),
  );
  return { d, said };
}

describe("a container member's data dirs as paths on this machine (MemberDriver.dataDirs)", () => {
  it("a named volume: its Mountpoint, and the data dir's part under the mount (--data-dir, stopped container)", async () => {
    const e = fakeEngine({
      containers: [
        container({ cmd: ['/usr/local/bin/etcd', '--name=c1', '--data-dir', '/var/lib/etcd/data'], mounts: [volume('etcd-c1-data', '/var/lib/etcd')] }),
      ],
      volumes: ['etcd-c1-data'],
    });
    const { d } = driverOn(e);
    expect(await d.dataDirs(m)).toEqual({ dataDir: `${VOLUMES}/etcd-c1-data/_data/data` });
    expect(e.calls).toContainEqual(['podman', 'volume', 'inspect', 'etcd-c1-data']);
  });

  it('a bind mount: its source; the data dir from ETCD_DATA_DIR, relative to the working dir', async () => {
    const e = fakeEngine({
      containers: [container({ cmd: ['/usr/local/bin/etcd'], env: ['ETCD_DATA_DIR=data'], workdir: '/etcd', mounts: [bind('/srv/etcd-c1', '/etcd')] })],
    });
    expect(await driverOn(e).d.dataDirs(m)).toEqual({ dataDir: '/srv/etcd-c1/data' });
  });

  it('from the config file the command names (read from its mount on the host): its data-dir and wal-dir', async () => {
    const e = fakeEngine({
      containers: [
        container({
          cmd: ['/usr/local/bin/etcd', '--config-file', '/etc/etcd/etcd.yml'],
          mounts: [bind('/srv/etcd-conf', '/etc/etcd'), volume('etcd-c1-data', '/var/lib/etcd'), volume('etcd-c1-wal', '/var/lib/etcd-wal')],
        }),
      ],
      volumes: ['etcd-c1-data', 'etcd-c1-wal'],
      files: { '/srv/etcd-conf/etcd.yml': 'name: c1\ndata-dir: /var/lib/etcd\nwal-dir: /var/lib/etcd-wal/wal\n' },
    });
    expect(await driverOn(e).d.dataDirs(m)).toEqual({ dataDir: `${VOLUMES}/etcd-c1-data/_data`, walDir: `${VOLUMES}/etcd-c1-wal/_data/wal` });
  });

  it("no container of the member's name (killed after the keep): the newest kept one's, which the next start takes its settings from", async () => {
    const kept = (n: string, created: string, vol: string) =>
      container({
        name: `etcd-c1.opsctl-kept-${n}`,
        created,
        cmd: ['/usr/local/bin/etcd', '--data-dir=/var/lib/etcd'],
        mounts: [volume(vol, '/var/lib/etcd')],
      });
    const e = fakeEngine({
      containers: [
        kept('20261127T150000-aaaaaaaaaaaa', '2026-11-27T15:00:00Z', 'old'),
        kept('20261127T160000-bbbbbbbbbbbb', '2026-11-27T16:00:00Z', 'etcd-c1-data'),
      ],
      volumes: ['old', 'etcd-c1-data'],
    });
    expect(await driverOn(e).d.dataDirs(m)).toEqual({ dataDir: `${VOLUMES}/etcd-c1-data/_data` });
  });

  it('undefined where the engine may be on another machine, said on the debug sink, with no engine call', async () => {
    const e = fakeEngine({ containers: [container({ cmd: ['/usr/local/bin/etcd'], mounts: [] })] });
    const remote = driverOn(e, { onHost: 'ssh {host} sudo' });
    expect(await remote.d.dataDirs(m)).toBeUndefined();
    expect(remote.said.join('\n')).toMatch(/c1: its data dirs are not read on this machine: .*driver\.onHost/);
    const tcp = driverOn(e, { engine: 'docker' }, { DOCKER_HOST: 'tcp://10.0.0.5:2376' });
    expect(await tcp.d.dataDirs(m)).toBeUndefined();
    expect(tcp.said.join('\n')).toContain('DOCKER_HOST=tcp://10.0.0.5:2376 names an engine elsewhere');
    const conn = driverOn(e, {}, { CONTAINER_CONNECTION: 'prod' });
    expect(await conn.d.dataDirs(m)).toBeUndefined();
    expect(e.calls).toEqual([]);
  });

  it('undefined, saying why, where the data dir is on no mount, the engine has no such container or volume, or the config file cannot be read', async () => {
    const cases: Array<[Parameters<typeof fakeEngine>[0], RegExp]> = [
      [
        { containers: [container({ cmd: ['/usr/local/bin/etcd', '--data-dir=/data'], mounts: [bind('/srv/x', '/other')] })] },
        /data dir \/data is on no volume or bind mount/,
      ],
      [{ containers: [] }, /the engine has no container etcd-c1/],
      [{ containers: [container({ cmd: ['/usr/local/bin/etcd', '--data-dir=/d'], mounts: [volume('gone', '/d')] })] }, /the engine has no volume gone/],
      [
        { containers: [container({ cmd: ['/usr/local/bin/etcd', '--config-file=/c/e.yml'], mounts: [bind('/srv/c', '/c'), volume('v', '/var/lib/etcd')] })] },
        /config file \/c\/e\.yml \(\/srv\/c\/e\.yml on its host\) cannot be read/,
      ],
      [
        { containers: [container({ cmd: ['/usr/local/bin/etcd', '--data-dir=/d', '--wal-dir=/w'], mounts: [volume('v', '/d')] })], volumes: ['v'] },
        /WAL dir \/w \(its wal-dir\) is on no volume or bind mount/,
      ],
    ];
    for (const [engine, why] of cases) {
      const { d, said } = driverOn(fakeEngine(engine));
      expect(await d.dataDirs(m)).toBeUndefined();
      expect(said.join('\n')).toMatch(why);
    }
  });

  it('on this machine: a unix socket or a loopback address; docker through a local socket is read', async () => {
    expect(['unix:///run/podman/podman.sock', 'tcp://127.0.0.1:2375', 'tcp://localhost:2375', 'tcp://[::1]:2375'].map(onThisMachine)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['tcp://10.0.0.5:2376', 'ssh://ops@db1', 'tcp://etcd-host:2375'].map(onThisMachine)).toEqual([false, false, false]);
    const e = fakeEngine({
      program: 'docker',
      containers: [container({ cmd: ['/usr/local/bin/etcd', '--data-dir=/d'], mounts: [bind('/srv/d', '/d')] })],
    });
    expect(await driverOn(e, { engine: 'docker' }, { DOCKER_HOST: 'unix:///tmp/x/podman.sock' }).d.dataDirs(m)).toEqual({ dataDir: '/srv/d' });
  });
});

describe('a WAL dir of its own (--wal-dir)', () => {
  const walOwn = () =>
    container({
      cmd: ['/usr/local/bin/etcd', '--name=c1', '--data-dir=/var/lib/etcd', '--wal-dir', '/var/lib/etcd-wal'],
      mounts: [volume('etcd-c1-data', '/var/lib/etcd'), volume('etcd-c1-wal', '/var/lib/etcd-wal')],
    });

  it("apart where the data dir's copy does not hold it: outside the data dir, or on a mount of its own under it", () => {
    const at = (cmd: string[], mounts: object[]) => placeDirs(parseInspect(container({ cmd: ['/usr/local/bin/etcd', ...cmd], mounts })));
    expect(at(['--data-dir=/var/lib/etcd', '--wal-dir=/var/lib/etcd-wal'], [volume('d', '/var/lib/etcd'), volume('w', '/var/lib/etcd-wal')])).toMatchObject({
      source: `${VOLUMES}/d/_data`,
      wal: { dir: '/var/lib/etcd-wal', source: `${VOLUMES}/w/_data`, apart: true },
    });
    // the same mount, outside the data dir
    expect(at(['--data-dir=/e/data', '--wal-dir=/e/wal'], [bind('/srv/e', '/e')])).toMatchObject({
      source: '/srv/e/data',
      wal: { source: '/srv/e/wal', apart: true },
    });
    // inside the data dir, on its mount: its copy holds it
    expect(at(['--data-dir=/e', '--wal-dir=/e/wal'], [bind('/srv/e', '/e')])).toMatchObject({ wal: { source: '/srv/e/wal', apart: false } });
    // inside the data dir, on a mount of its own
    expect(at(['--data-dir=/e', '--wal-dir=/e/wal'], [bind('/srv/e', '/e'), bind('/fast/wal', '/e/wal')])).toMatchObject({
      wal: { source: '/fast/wal', apart: true },
    });
  });

  it('dataDirs gives both, the WAL dir through its own volume', async () => {
    const e = fakeEngine({ containers: [walOwn()], volumes: ['etcd-c1-data', 'etcd-c1-wal'] });
    expect(await driverOn(e).d.dataDirs(m)).toEqual({ dataDir: `${VOLUMES}/etcd-c1-data/_data`, walDir: `${VOLUMES}/etcd-c1-wal/_data` });
  });

  it("the backup copies both (the WAL as the copy's member/wal), measures both, and the put-back restores both", async () => {
    const e = fakeEngine({ containers: [walOwn()], volumes: ['etcd-c1-data', 'etcd-c1-wal'] });
    const { d } = driverOn(e);
    const copyDir = `${VOLUMES}/etcd-c1.opsctl-backup-${RUN}/_data`;
    const detail = await d.backupDataDir(m, '', RUN);
    expect(detail).toContain(`its WAL dir /var/lib/etcd-wal (volume etcd-c1-wal: ${VOLUMES}/etcd-c1-wal/_data) as member/wal`);
    const copy = e.calls.find((c) => c[0] === 'sh' && c[2] === COPY_SCRIPT)!;
    expect(copy.slice(3)).toEqual(['sh', `${VOLUMES}/etcd-c1-data/_data`, copyDir, `${VOLUMES}/etcd-c1-wal/_data`]);

    const space = await d.backupSpace(m);
    // du -sk of the data dir (120 KiB) and of the WAL dir (300 KiB)
    expect(space).toMatchObject({ dataBytes: 420 * 1024, dataDir: `127.0.0.1:${VOLUMES}/etcd-c1-data/_data and ${VOLUMES}/etcd-c1-wal/_data`, ok: true });
    expect(e.calls).toContainEqual(['du', '-sk', '--', `${VOLUMES}/etcd-c1-wal/_data`]);

    const back = await d.restoreBackup(m, '', RUN);
    expect(back).toContain(`WAL dir ${VOLUMES}/etcd-c1-wal/_data (its member/wal) restored from volume etcd-c1.opsctl-backup-${RUN}`);
    const restore = e.calls.find((c) => c[0] === 'sh' && c[2] === RESTORE_SCRIPT)!;
    expect(restore.slice(4)).toEqual([
      `${VOLUMES}/etcd-c1-data/_data`,
      copyDir,
      `${VOLUMES}/etcd-c1.opsctl-failed-${RUN}/_data`,
      `${VOLUMES}/etcd-c1-wal/_data`,
    ]);
  });

  it('a WAL dir inside the data dir on its mount is copied with it: no fourth argument', async () => {
    const e = fakeEngine({
      containers: [container({ cmd: ['/usr/local/bin/etcd', '--data-dir=/e', '--wal-dir=/e/wal'], mounts: [bind('/srv/e', '/e')] })],
    });
    const { d } = driverOn(e);
    await d.backupDataDir(m, '', RUN);
    await d.restoreBackup(m, '', RUN);
    expect(e.calls.find((c) => c[2] === COPY_SCRIPT)!.slice(4)).toEqual(['/srv/e', `/srv/e.opsctl-backup-${RUN}`]);
    expect(e.calls.find((c) => c[2] === RESTORE_SCRIPT)!.slice(4)).toEqual(['/srv/e', `/srv/e.opsctl-backup-${RUN}`, `/srv/e.opsctl-failed-${RUN}`]);
    expect(await d.dataDirs(m)).toEqual({ dataDir: '/srv/e', walDir: '/srv/e/wal' });
  });

  it("the scripts: the WAL as the copy's member/wal, kept as the failed data's member/wal and put back into the WAL dir", () => {
    expect(COPY_SCRIPT).toContain('cp -a --sparse=always -- "$wal" "$dest/member/wal"');
    expect(RESTORE_SCRIPT).toContain('-exec mv -t "$failed/member/wal"');
    expect(RESTORE_SCRIPT).toContain('cp -a --sparse=always -- "$copy/member/wal/." "$wal/"');
    expect(RESTORE_SCRIPT).toContain('! -name wal -exec cp -a --sparse=always -t "$data/member/"');
  });
});

describe('the proof of a member with a WAL dir of its own', () => {
  it("copies the WAL dir in the same pause to the trial's wal-dir, and never mounts the member's WAL (or data) volume into the proof", async () => {
    const running = {
      ...container({
        cmd: ['/usr/local/bin/etcd', '--name=c1', '--data-dir=/var/lib/etcd', '--wal-dir=/var/lib/etcd-wal', '--listen-client-urls=http://127.0.0.1:2379'],
        mounts: [volume('etcd-c1-data', '/var/lib/etcd'), volume('etcd-c1-wal', '/var/lib/etcd-wal'), bind('/srv/pki', '/etc/pki')],
      }),
      State: { Running: true, ExitCode: 0 },
    };
    let proof: ReturnType<typeof container> | undefined;
    const e = fakeEngine({
      containers: [running],
      volumes: ['etcd-c1-data', 'etcd-c1-wal'],
      also: ([file, ...a]) => {
        if (file === 'mktemp') return ok('/var/tmp/opsctl-container-proof.X\n');
        if (['chown', 'chmod', 'cp', 'rm'].includes(file!)) return ok();
        if (file === 'du') return ok('4096\t/var/tmp/opsctl-container-proof.X/data\n8192\t/var/tmp/opsctl-container-proof.X/wal\n12288\ttotal\n');
        if (file !== 'podman') return undefined;
        if (a[0] === 'pause' || a[0] === 'unpause' || a[0] === 'rm') return ok();
        if (a[0] === 'run') {
          proof = { ...container({ name: a[a.indexOf('--name') + 1], cmd: [], mounts: [] }), State: { Running: true, ExitCode: 0 } };
          return ok('id');
        }
        if (a[0] === 'container' && a[1] === 'inspect' && proof && a[2] === proof.Name) return ok(JSON.stringify([proof]));
        if (a[0] === 'exec') return ok('[{"Status":{"version":"3.6.16"}}]');
        return undefined;
      },
    });
    const d = new ContainerDriver({ type: 'container', engine: 'podman', images: { '3.6': 'localhost/etcd:v3.6.16' } }, e.run, {});
    const [found] = await d.proveStarts(m, [{ version: '3.6' }], 30);
    expect(found).toMatchObject({ result: 'ok', version: '3.6.16' });
    expect(found!.detail).toContain(`its data volume and WAL dir (${VOLUMES}/etcd-c1-data/_data, ${VOLUMES}/etcd-c1-wal/_data: 12 KiB; etcd-c1 paused`);
    const i = e.calls.findIndex((c) => c[1] === 'pause');
    const j = e.calls.findIndex((c) => c[1] === 'unpause');
    expect(e.calls.slice(i + 1, j)).toEqual([
      ['cp', '-a', '--sparse=always', '--', `${VOLUMES}/etcd-c1-data/_data`, '/var/tmp/opsctl-container-proof.X/data'],
      ['cp', '-a', '--sparse=always', '--', `${VOLUMES}/etcd-c1-wal/_data`, '/var/tmp/opsctl-container-proof.X/wal'],
    ]);
    const run = e.calls.find((c) => c[0] === 'podman' && c[1] === 'run')!;
    const mounts = run.filter((_, k) => run[k - 1] === '--mount');
    expect(mounts).toEqual([
      'type=bind,source=/var/tmp/opsctl-container-proof.X,destination=/opsctl-trial',
      'type=bind,source=/srv/pki,destination=/etc/pki,readonly',
    ]);
    expect(run).toContain('--wal-dir=/opsctl-trial/wal');
    expect(run).toContain('--data-dir=/opsctl-trial/data');
  });
});

describe("what opsctl reads here of a container member's WAL, through dataDirs", () => {
  const root = mkdtempSync(join(tmpdir(), 'opsctl-container-dirs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("the put-back's WAL mark reads the member's own WAL dir on its bind mount (its data dir's member/wal is not what etcd reads)", async () => {
    const entry = (index: number) => frame(Buffer.concat([field(1, 2), field(3, Buffer.concat([field(2, 2), field(3, index), field(4, v3Put(8))]))]));
    mkdirSync(join(root, 'data', 'member', 'wal'), { recursive: true });
    mkdirSync(join(root, 'wal-disk', 'wal'), { recursive: true });
    writeFileSync(join(root, 'data', 'member', 'wal', '0000000000000000-0000000000000000.wal'), Buffer.concat([entry(1), Buffer.alloc(4096)]));
    writeFileSync(join(root, 'wal-disk', 'wal', '0000000000000000-0000000000000000.wal'), Buffer.concat([entry(1), entry(2), entry(3), Buffer.alloc(4096)]));
    const e = fakeEngine({
      containers: [
        container({
          cmd: ['/usr/local/bin/etcd', '--data-dir=/var/lib/etcd', '--wal-dir=/var/lib/etcd-wal/wal'],
          mounts: [bind(join(root, 'data'), '/var/lib/etcd'), bind(join(root, 'wal-disk'), '/var/lib/etcd-wal')],
        }),
      ],
    });
    const mark = (await walMarkOf(driverOn(e).d, m)) as WalMark;
    expect(mark.text).toBe('3 records, raft index 3 at term 0');
    // an engine elsewhere: not read here, but asked on the engine's host through its prefix (this fake engine answers
    // no `ssh` there, so the mark says why it cannot be told; test/e2e/kv-containers-walmark.test.ts reads one there)
    expect(await walMarkOf(driverOn(e, { onHost: 'ssh {host}' }).d, m)).toEqual({
      why: expect.stringContaining("c1's WAL dir on its engine's host cannot be told: `ssh -- 127.0.0.1 podman container inspect etcd-c1` failed") as unknown,
    });
  });
});

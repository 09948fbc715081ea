import { describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { ContainerDriver } from '../../src/kv/containers/driver.js';
import { copiedBytes, copyFilesystem, copyPlace, dataDirIn, COPY_SCRIPT, RESTORE_SCRIPT } from '../../src/kv/containers/backup.js';
import { keptName, keptToPrune, keptWhen, stampOf, type KeptContainer } from '../../src/kv/containers/prune.js';
import { policyRestarts } from '../../src/kv/containers/settings.js';

const VOLUME = {
  type: 'volume' as const,
  source: 'etcd-c1-data',
  hostPath: '/var/lib/containers/storage/volumes/etcd-c1-data/_data',
  destination: '/var/lib/etcd',
  readOnly: false,
};
const BIND = { type: 'bind' as const, source: '/srv/etcd-c1', hostPath: '/srv/etcd-c1', destination: '/etcd', readOnly: false };

describe("where a container member's data-dir copy goes", () => {
  it("a volume's data: a volume of its own named by the container and {run}; a bind's: a directory beside the data", () => {
    const run = '20261127T160040-ab12cd';
    expect(copyPlace({ container: 'etcd-c1', data: { mount: VOLUME, source: VOLUME.hostPath }, run, what: 'backup' })).toEqual({
      kind: 'volume',
      name: `etcd-c1.opsctl-backup-${run}`,
    });
    expect(copyPlace({ container: 'etcd-c1', data: { mount: VOLUME, source: VOLUME.hostPath }, run: `${run}.2`, what: 'failed' })).toEqual({
      kind: 'volume',
      name: `etcd-c1.opsctl-failed-${run}.2`,
    });
    expect(copyPlace({ container: 'etcd-c1', data: { mount: BIND, source: '/srv/etcd-c1/data/' }, run, what: 'backup' })).toEqual({
      kind: 'dir',
      path: `/srv/etcd-c1/data.opsctl-backup-${run}`,
    });
  });

  it("its filesystem (for the space check): the volumes directory, or the bind data's parent", () => {
    expect(copyFilesystem({ mount: VOLUME, source: VOLUME.hostPath })).toBe('/var/lib/containers/storage/volumes');
    expect(copyFilesystem({ mount: BIND, source: '/srv/etcd-c1/data' })).toBe('/srv/etcd-c1');
  });

  it("the data dir inside the container: the config file's, the command's, ETCD_DATA_DIR, else NAME.etcd in the working dir", () => {
    expect(dataDirIn({ argv: ['etcd', '--data-dir', 'data'], env: {}, workdir: '/var/lib/etcd' }, undefined)).toBe('/var/lib/etcd/data');
    expect(dataDirIn({ argv: ['etcd'], env: { ETCD_DATA_DIR: '/d' } }, undefined)).toBe('/d');
    expect(dataDirIn({ argv: ['etcd', '--data-dir=/x'], env: {} }, '/from-config')).toBe('/from-config');
    expect(dataDirIn({ argv: ['etcd', '--name=c1'], env: {} }, undefined)).toBe('/c1.etcd');
  });

  it('the scripts copy sparse, keep the dir itself (a mount point), and read their size back', () => {
    expect(COPY_SCRIPT).toContain('cp -a --sparse=always -- "$src/." "$dest/"');
    expect(RESTORE_SCRIPT).toContain('mv -t "$failed"');
    expect(RESTORE_SCRIPT).toContain('cp -a --sparse=always -- "$copy/." "$data/"');
    expect(copiedBytes('x\nopsctl-copied: 61440\n')).toBe(61440);
    expect(copiedBytes('nothing')).toBeUndefined();
  });
});

describe('kept containers and kv backups prune', () => {
  it('a kept name says when it was kept, as run ids begin', () => {
    const at = new Date('2026-11-27T16:00:40.123Z');
    expect(stampOf(at)).toBe('20261127T160040');
    const n = keptName('etcd-c1', '49e6887078f480dd82950c3e1afa542dd450a113', at);
    expect(n).toBe('etcd-c1.opsctl-kept-20261127T160040-49e6887078f4');
    expect(keptWhen(n)).toBe('20261127T160040');
    expect(keptWhen('etcd-c1.opsctl-kept-49e6887078f4')).toBeUndefined();
  });

  it('removes those the pruned runs kept and those older than every run; never one of a kept run, one that runs, or an undated one', () => {
    const k = (name: string, running = false): KeptContainer => ({ member: 'c1', name, image: 'img', running });
    const r1 = '20261127T100000-aaaaaa';
    const r2 = '20261127T120000-bbbbbb';
    const r3 = '20261127T140000-cccccc';
    const v = keptToPrune(
      [
        k('etcd-c1.opsctl-kept-20261127T090000-000000000001'),
        k('etcd-c1.opsctl-kept-20261127T100000-000000000002'),
        k('etcd-c1.opsctl-kept-20261127T110000-000000000003'),
        k('etcd-c1.opsctl-kept-20261127T113000-000000000004', true),
        k('etcd-c1.opsctl-kept-20261127T120500-000000000005'),
        k('etcd-c1.opsctl-kept-20261127T150000-000000000006'),
        k('etcd-c1.opsctl-kept-000000000007'),
      ],
      { keep: [r3], remove: [r2, r1] },
    );
    expect(v.remove.map((x) => [x.name.slice(-1), x.run])).toEqual([
      ['1', undefined],
      ['2', r1],
      ['3', r1],
      ['5', r2],
    ]);
    expect(v.stay.map((x) => x.name.slice(-1))).toEqual(['4', '6', '7']);
    expect(v.stay[1]!.why).toContain(r3);
  });
});

/** An engine that answers as podman 4.3 does, recording each call (no process is started). */
function fakeEngine() {
  const calls: string[][] = [];
  const volumes = new Map<string, string>();
  const stopped = {
    Id: '49e6887078f480dd82950c3e1afa542dd450a113657a6b8ad6b22856ec71aeb1',
    Name: 'etcd-c1',
    ImageName: 'localhost/etcd:v3.5.35',
    Image: '95f3da7cc22a',
    State: { Running: false },
    Mounts: [{ Type: 'volume', Name: 'etcd-c1-data', Source: VOLUME.hostPath, Destination: '/var/lib/etcd', RW: true }],
    Config: { Cmd: ['/usr/local/bin/etcd', '--name=c1', '--data-dir', '/var/lib/etcd'], Env: [], Entrypoint: '' },
    HostConfig: { NetworkMode: 'host' },
  };
  const answer = (argv: string[]): { stdout: string; stderr: string; exitCode: number } => {
    const [file, ...a] = argv;
    if (file === 'podman' && a[0] === 'container' && a[1] === 'inspect')
      return a[2] === 'etcd-c1'
        ? { stdout: JSON.stringify([stopped]), stderr: '', exitCode: 0 }
        : { stdout: '', stderr: 'Error: no such container', exitCode: 125 };
    if (file === 'podman' && a[0] === 'volume' && a[1] === 'inspect') {
      const mp = volumes.get(a[2]!);
      return mp
        ? { stdout: JSON.stringify([{ Mountpoint: mp }]), stderr: '', exitCode: 0 }
        : { stdout: '', stderr: `Error: no such volume ${a[2]}`, exitCode: 125 };
    }
    if (file === 'podman' && a[0] === 'volume' && a[1] === 'create') {
      const name = a[a.length - 1]!;
      volumes.set(name, `/var/lib/containers/storage/volumes/${name}/_data`);
      return { stdout: name, stderr: '', exitCode: 0 };
    }
    if (file === 'podman' && a[0] === 'volume' && a[1] === 'rm')
      return volumes.delete(a[2]!) ? { stdout: '', stderr: '', exitCode: 0 } : { stdout: '', stderr: 'no such volume', exitCode: 1 };
    if (file === 'podman' && (a[0] === 'stop' || a[0] === 'kill')) return { stdout: a[a.length - 1]!, stderr: '', exitCode: 0 };
    if (file === 'sh' && a[1] === COPY_SCRIPT) return { stdout: 'opsctl-copied: 61440\n', stderr: '', exitCode: 0 };
    if (file === 'sh' && a[1] === RESTORE_SCRIPT) return { stdout: '', stderr: '', exitCode: 0 };
    if (file === 'sh' && a[1]!.startsWith('du -sk'))
      return {
        stdout: `120\t${VOLUME.hostPath}\nFilesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 1000000 500000 400000 56% /\n`,
        stderr: '',
        exitCode: 0,
      };
    if (file === 'sh' && a[1]!.includes('opsctl-size')) return { stdout: 'opsctl-size: bytes 61440\n', stderr: '', exitCode: 0 };
    return { stdout: '', stderr: `unexpected ${argv.join(' ')}`, exitCode: 99 };
  };
  const run = (file: string, args: string[]) => {
    calls.push([file, ...args]);
    return Promise.resolve({ ...answer([file, ...args]), timedOut: false });
  };
  return { calls, volumes, run: run as unknown as typeof import('execa').execa };
}

describe("the container driver backs up, puts back, measures and removes a member's data", () => {
  const m: MemberSpec = { name: 'c1', endpoint: 'http://127.0.0.1:2379', container: 'etcd-c1' };
  const run = '20261127T160040-ab12cd';

  it("copies a stopped member's volume into a volume of its own, measures it, puts it back and removes it", async () => {
    const e = fakeEngine();
    const d = new ContainerDriver({ type: 'container', engine: 'podman', images: {} }, e.run, {});
    const detail = await d.backupDataDir(m, '', run);
    expect(detail).toContain(`volume etcd-c1.opsctl-backup-${run}`);
    expect(detail).toContain('61440 bytes on disk');
    const create = e.calls.find((c) => c[1] === 'volume' && c[2] === 'create')!;
    expect(create).toEqual([
      'podman',
      'volume',
      'create',
      '--label',
      'io.opsctl.member=c1',
      '--label',
      'io.opsctl.backup-of=etcd-c1-data',
      `etcd-c1.opsctl-backup-${run}`,
    ]);
    const copy = e.calls.find((c) => c[0] === 'sh' && c[2] === COPY_SCRIPT)!;
    expect(copy.slice(3)).toEqual(['sh', VOLUME.hostPath, `/var/lib/containers/storage/volumes/etcd-c1.opsctl-backup-${run}/_data`]);

    expect(await d.copySize(m, run)).toEqual({ path: `/var/lib/containers/storage/volumes/etcd-c1.opsctl-backup-${run}/_data`, bytes: 61440 });
    const space = await d.backupSpace(m);
    expect(space).toMatchObject({ host: '127.0.0.1', dest: '127.0.0.1:/', dataBytes: 120 * 1024, free: 400000 * 1024, ok: true });

    const back = await d.restoreBackup(m, '', run);
    expect(back).toContain(`the data the target ran on kept in volume etcd-c1.opsctl-failed-${run}`);
    const restore = e.calls.find((c) => c[0] === 'sh' && c[2] === RESTORE_SCRIPT)!;
    expect(restore.slice(4)).toEqual([
      VOLUME.hostPath,
      `/var/lib/containers/storage/volumes/etcd-c1.opsctl-backup-${run}/_data`,
      `/var/lib/containers/storage/volumes/etcd-c1.opsctl-failed-${run}/_data`,
    ]);

    expect(await d.dropBackup(m, '', run)).toContain('removed');
    expect(e.volumes.has(`etcd-c1.opsctl-backup-${run}`)).toBe(false);
    // (once more, after a kill: gone already is not an error)
    expect(await d.dropBackup(m, '', run)).toContain('gone already');
    expect(await d.copySize(m, run)).toMatchObject({ why: expect.stringContaining('not there') as unknown });
  });

  it('refuses to copy or put back the data of a container that runs', async () => {
    const e = fakeEngine();
    const d = new ContainerDriver({ type: 'container', engine: 'podman', images: {} }, e.run, {});
    const inspect = d.engine.inspect.bind(d.engine);
    d.engine.inspect = async (mm, name) => ({ ...(await inspect(mm, name))!, running: true });
    await expect(d.backupDataDir(m, '', run)).rejects.toThrow(/runs: its data is copied only with the container stopped/);
    await expect(d.restoreBackup(m, '', run)).rejects.toThrow(/keeps being started again \(its restart policy\)/);
    expect(e.calls.some((c) => c[0] === 'sh')).toBe(false);
  });

  it('puts back only once a container its restart policy starts again stays stopped (stopped while it runs)', async () => {
    const e = fakeEngine();
    const d = new ContainerDriver({ type: 'container', engine: 'podman', images: {} }, e.run, {});
    const inspect = d.engine.inspect.bind(d.engine);
    // exited (a failed start), started again by its policy, then stopped by hand: it stays stopped
    const states = [false, true];
    let stoppedByHand = false;
    d.engine.inspect = async (mm, name) => {
      const c = (await inspect(mm, name))!;
      if (e.calls.some((x) => x[1] === 'stop')) stoppedByHand = true;
      return { ...c, restart: { name: 'unless-stopped', retries: 0 }, running: stoppedByHand ? false : (states.shift() ?? true) };
    };
    await d.backupDataDir(m, '', run);
    expect(await d.restoreBackup(m, '', run)).toContain('restored from volume');
    expect(e.calls.filter((x) => x[1] === 'stop')).toEqual([['podman', 'stop', '--time', '30', 'etcd-c1']]);
  });
});

describe('a container its restart policy keeps starting (a start that fails)', () => {
  const m: MemberSpec = { name: 'c1', endpoint: 'http://127.0.0.1:2379', container: 'etcd-c1' };
  const policy = { name: 'unless-stopped', retries: 0 };

  it('runs, or will run again by itself: running, restarting, or exited not 0 under a policy', () => {
    expect(policyRestarts({ running: false, restarting: false, restart: policy, exitCode: 2 })).toBe(true);
    expect(policyRestarts({ running: false, restarting: true, exitCode: 0 })).toBe(true);
    // a stop by hand (etcd exits 0 on SIGTERM), no policy, or never started
    expect(policyRestarts({ running: false, restarting: false, restart: policy, exitCode: 0 })).toBe(false);
    expect(policyRestarts({ running: false, restarting: false, exitCode: 2 })).toBe(false);
    expect(policyRestarts({ running: false, restarting: false, restart: policy })).toBe(false);
  });

  /** A driver whose member's container exited 2 under its policy, between two of its starts. */
  const failing = () => {
    const e = fakeEngine();
    const d = new ContainerDriver({ type: 'container', engine: 'podman', images: {} }, e.run, {});
    const inspect = d.engine.inspect.bind(d.engine);
    d.engine.inspect = async (mm, name) => ({ ...(await inspect(mm, name))!, restart: policy, running: false, exitCode: 2 });
    return { e, d };
  };

  it('is running for the flows until it is stopped by hand: a stop of it holds it even between two of its starts', async () => {
    const { e, d } = failing();
    expect(await d.isRunning(m)).toBe(true);
    await d.stop(m);
    expect(e.calls.filter((x) => x[1] === 'stop')).toEqual([['podman', 'stop', '--time', '60', 'etcd-c1']]);
    expect(await d.isRunning(m)).toBe(false);
  });

  it('kill (the last resort of a wait for the process to be gone): SIGKILL, then a stop of no grace that holds it', async () => {
    const { e, d } = failing();
    await d.kill(m);
    expect(e.calls.filter((x) => x[1] === 'stop' || x[1] === 'kill')).toEqual([
      ['podman', 'kill', '--signal', 'KILL', 'etcd-c1'],
      ['podman', 'stop', '--time', '0', 'etcd-c1'],
    ]);
    expect(await d.isRunning(m)).toBe(false);
  });

  it("docker's stop takes --timeout (its --time is deprecated)", () => {
    const d = new ContainerDriver({ type: 'container', engine: '/usr/bin/docker', images: {} }, fakeEngine().run, {});
    expect(d.engine.stopArgs('etcd-c1', 60)).toEqual(['stop', '--timeout', '60', 'etcd-c1']);
  });
});

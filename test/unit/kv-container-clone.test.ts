import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { ContainerDriver } from '../../src/kv/containers/driver.js';
import { cloneTag, dropClone, findContainerClone, parseCloneRecord, readContainerClone } from '../../src/kv/containers/clone.js';
import { CLONE_RECORD } from '../../src/kv/rehearsal/clone-find.js';
import { LocalFileError } from '../../src/core/local-file.js';
import { container, fakeEngine, ok, volume, VOLUMES } from '../helpers/fake-engine.js';

const members: MemberSpec[] = [
  { name: 'c1', endpoint: 'http://127.0.0.1:2379', container: 'etcd-c1' },
  { name: 'c2', endpoint: 'http://127.0.0.1:2479', container: 'etcd-c2' },
];

/** A member's container running on the host's network, its data on a volume of its own. */
const running = (name: string, pid: number, network = 'host') => ({
  ...container({
    name,
    cmd: ['/usr/local/bin/etcd', `--name=${name.slice(5)}`, '--data-dir', '/var/lib/etcd'],
    mounts: [volume(`${name}-data`, '/var/lib/etcd')],
  }),
  State: { Running: true, Pid: pid, ExitCode: 0 },
  HostConfig: { NetworkMode: network },
});

const version = (argv: string[]) => (argv[1] === 'exec' ? ok('etcd Version: 3.5.35\nGit SHA: x\n') : undefined);
const driver = (e: ReturnType<typeof fakeEngine>, engine = 'podman', env: NodeJS.ProcessEnv = {}) =>
  new ContainerDriver({ type: 'container', engine, images: { '3.6': 'localhost/etcd:v3.6.16' } }, e.run, env);

describe("the rehearsal's clone of container members (kv/containers/clone.ts)", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("podman's members here, as root: their processes paused for the copy, their volumes' directories copied, the record with the clone's tag", async () => {
    const e = fakeEngine({ containers: [running('etcd-c1', 4101), running('etcd-c2', 4102)], volumes: ['etcd-c1-data', 'etcd-c2-data'], also: version });
    const c = await findContainerClone(driver(e), members, 0);
    if ('why' in c) throw new Error(c.why);
    expect(c.pause).toEqual([4101, 4102]);
    expect(c.outside).toEqual([`${VOLUMES}/etcd-c1-data/_data`, `${VOLUMES}/etcd-c2-data/_data`]);
    expect(c.engineRuns).toBe(true);
    expect(c.paths).toEqual([]);
    const record = parseCloneRecord(c.files![CLONE_RECORD]!);
    expect(record).toEqual({
      kind: 'container',
      tag: cloneTag(),
      members: [
        { name: 'c1', version: '3.5' },
        { name: 'c2', version: '3.5' },
      ],
    });
    // (the version asked of the member's own etcd, in its container)
    expect(e.calls).toContainEqual(['podman', 'exec', 'etcd-c1', '/usr/local/bin/etcd', '--version']);
    // looking changes nothing
    expect(e.calls.filter((x) => ['create', 'start', 'stop', 'rm', 'rename', 'pause'].includes(x[1]!))).toEqual([]);
  });

  it('refused, with the reason: docker (a daemon), a podman service, rootless podman, a member not running, one on a network of the engine', async () => {
    const e = fakeEngine({ containers: [running('etcd-c1', 4101), running('etcd-c2', 4102)], volumes: ['etcd-c1-data', 'etcd-c2-data'], also: version });
    const why = async (d: ContainerDriver, uid = 0) => {
      const c = await findContainerClone(d, members, uid);
      return 'why' in c ? c.why : 'cloned';
    };
    expect(await why(driver(e, 'docker'))).toMatch(
      /^docker's daemon starts containers in its own namespaces: a clone's member would share the cluster's network and data/,
    );
    expect(await why(driver(e, 'podman', { CONTAINER_HOST: 'unix:///run/podman/podman.sock' }))).toMatch(/^CONTAINER_HOST names a podman service/);
    expect(await why(driver(e), 1000)).toMatch(/rootless/);
    const stopped = fakeEngine({
      containers: [running('etcd-c1', 4101), { ...running('etcd-c2', 0), State: { Running: false, ExitCode: 0 } }],
      volumes: ['etcd-c1-data', 'etcd-c2-data'],
      also: version,
    });
    expect(await why(driver(stopped))).toBe('etcd-c2 (member c2) is not running: a clone is copied from running members');
    const bridged = fakeEngine({
      containers: [running('etcd-c1', 4101), running('etcd-c2', 4102, 'bridge')],
      volumes: ['etcd-c1-data', 'etcd-c2-data'],
      also: version,
    });
    expect(await why(driver(bridged))).toMatch(/^etcd-c2 \(member c2\) runs on the engine's bridge network/);
  });

  it("a clone of an opsctl that is gone is removed when the members are looked at; this one's by dropClone, the kept ones of its run too", async () => {
    const mine = cloneTag();
    const gone = 'opsctl-clone-999999999-1';
    const e = fakeEngine({
      containers: [
        running('etcd-c1', 4101),
        running('etcd-c2', 4102),
        { ...running(`etcd-c1.${gone}`, 5101), Name: `etcd-c1.${gone}` },
        { ...running(`etcd-c1.${mine}`, 5102), Name: `etcd-c1.${mine}` },
        { ...running(`etcd-c2.${mine}.opsctl-kept-20261128T080000-abc`, 0), Name: `etcd-c2.${mine}.opsctl-kept-20261128T080000-abc` },
      ],
      volumes: ['etcd-c1-data', 'etcd-c2-data'],
      also: (argv) => version(argv) ?? (argv[1] === 'rm' ? ok() : undefined),
    });
    await findContainerClone(driver(e), members, 0);
    const removed = () => e.calls.filter((x) => x[1] === 'rm').map((x) => x[x.length - 1]);
    expect(removed()).toEqual([`etcd-c1.${gone}`]);
    expect(await dropClone(driver(e), members)).toEqual([`etcd-c1.${mine}`, `etcd-c2.${mine}.opsctl-kept-20261128T080000-abc`]);
    expect(e.calls.find((x) => x[1] === 'rm')).toEqual(['podman', 'rm', '--force', '--time', '0', `etcd-c1.${gone}`]);
  });

  it("inside the clone: its containers under the clone's names, the first made from the member's own settings and image; a record not opsctl's is refused naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-clone-unit-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'rehearsal'));
    const tag = 'opsctl-clone-4242-77';
    writeFileSync(join(dir, CLONE_RECORD), JSON.stringify({ kind: 'container', tag, members: [{ name: 'c1', version: '3.5' }] }));
    const e = fakeEngine({
      containers: [running('etcd-c1', 4101)],
      volumes: ['etcd-c1-data'],
      also: (argv) =>
        argv[1] === 'image'
          ? ok(JSON.stringify([{ Id: 'sha256:95f3da7cc22a', Config: { Cmd: ['/usr/local/bin/etcd'] } }]))
          : ['create', 'start'].includes(argv[1]!)
            ? ok()
            : undefined,
    });
    const d = new ContainerDriver({ type: 'container', engine: 'podman', images: {} }, e.run, {}, undefined, await readContainerClone(dir));
    expect(d.containerOf(members[0]!)).toBe(`etcd-c1.${tag}`);
    expect(d.current(members[0]!)).toEqual({ version: '3.5', running: true });
    await d.start(members[0]!, { version: '3.5', running: true });
    const create = e.calls.find((x) => x[1] === 'create')!;
    expect(create.slice(0, 4)).toEqual(['podman', 'create', '--name', `etcd-c1.${tag}`]);
    expect(create).toContain('host');
    expect(create).toContain('type=volume,source=etcd-c1-data,destination=/var/lib/etcd');
    expect(create.slice(create.indexOf('95f3da7cc22a'))).toEqual(['95f3da7cc22a', '/usr/local/bin/etcd', '--name=c1', '--data-dir', '/var/lib/etcd']);
    expect(e.calls.find((x) => x[1] === 'start')).toEqual(['podman', 'start', `etcd-c1.${tag}`]);
    // never a change to the member's own container
    expect(e.calls.filter((x) => ['create', 'start', 'stop', 'rm', 'rename'].includes(x[1]!) && x.includes('etcd-c1'))).toEqual([]);
    writeFileSync(join(dir, CLONE_RECORD), JSON.stringify({ kind: 'container', tag: '$(reboot)', members: [{ name: 'c1', version: '3.5' }] }));
    const err = await readContainerClone(dir).catch((x: Error) => x);
    expect(err).toBeInstanceOf(LocalFileError);
    expect((err as Error).message).toContain(join(dir, CLONE_RECORD));
  });
});

import { describe, expect, it } from 'vitest';
import { createArgs, mountOf, parseImageDefaults, parseInspect, settingOf } from '../../src/kv/containers/settings.js';
import { lastWords } from '../../src/kv/containers/proof.js';

/** podman 4.3's inspect of a member container (trimmed to what is read), as `podman run --network host …` made it. */
const PODMAN = {
  Id: '49e6887078f480dd82950c3e1afa542dd450a113657a6b8ad6b22856ec71aeb1',
  Created: '2025-01-01T12:00:00.1Z',
  Name: 'etcd-c1',
  ImageName: 'localhost/etcd:v3.5.35',
  Image: '95f3da7cc22a',
  State: { Running: true },
  Mounts: [{ Type: 'volume', Name: 'etcd-c1-data', Source: '/var/lib/containers/storage/volumes/etcd-c1-data/_data', Destination: '/var/lib/etcd', RW: true }],
  Config: {
    Hostname: 'vm',
    User: '1000:1000',
    Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'TERM=xterm', 'container=podman', 'ETCD_LOG_LEVEL=warn', 'HOSTNAME=vm'],
    Cmd: ['/usr/local/bin/etcd', '--name=c1', '--data-dir', '/var/lib/etcd'],
    WorkingDir: '/',
    Entrypoint: '',
    Labels: { 'io.buildah.version': '1.28.2', team: 'ops' },
    StopSignal: 15,
  },
  HostConfig: {
    NetworkMode: 'host',
    RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
    Memory: 268435456,
    NanoCpus: 0,
    PidsLimit: 2048,
    Ulimits: [{ Name: 'RLIMIT_NOFILE', Soft: 20000, Hard: 20000 }],
    PortBindings: {},
  },
};

const IMAGE = parseImageDefaults({
  Config: {
    Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
    Cmd: ['/usr/local/bin/etcd'],
    Labels: { 'io.buildah.version': '1.28.2' },
  },
});

describe('a member container read from inspect, and the next one created with its settings', () => {
  it("reads podman's shape: command, environment, user, mount, network, restart policy, limits", () => {
    const s = parseInspect(PODMAN);
    expect(s).toMatchObject({ name: 'etcd-c1', image: 'localhost/etcd:v3.5.35', running: true, entrypoint: [], user: '1000:1000' });
    expect(s.argv).toEqual(['/usr/local/bin/etcd', '--name=c1', '--data-dir', '/var/lib/etcd']);
    expect(s.restart).toEqual({ name: 'unless-stopped', retries: 0 });
    expect(s.limits).toMatchObject({ memory: 268435456, pidsLimit: 2048, ulimits: [{ name: 'nofile', soft: 20000, hard: 20000 }] });
    expect(settingOf(s, 'data-dir')).toBe('/var/lib/etcd');
    expect(settingOf(s, 'log-level')).toBe('warn');
    expect(mountOf(s, '/var/lib/etcd/member')).toMatchObject({ mount: { source: 'etcd-c1-data' }, rest: 'member' });
    expect(mountOf(s, '/etc/etcd')).toBeUndefined();
  });

  it("creates the next from the hop's image with the same settings, leaving out what the engine and the old image added", () => {
    const a = createArgs({ settings: parseInspect(PODMAN), oldImage: IMAGE, name: 'etcd-c1', image: 'localhost/etcd:v3.6.16', member: 'c1' });
    expect(a).toEqual([
      'create',
      '--name',
      'etcd-c1',
      '--user',
      '1000:1000',
      '--env',
      'ETCD_LOG_LEVEL=warn',
      '--label',
      'team=ops',
      '--label',
      'io.opsctl.member=c1',
      '--network',
      'host',
      '--restart',
      'unless-stopped',
      '--memory',
      '268435456',
      '--pids-limit',
      '2048',
      '--ulimit',
      'nofile=20000:20000',
      '--mount',
      'type=volume,source=etcd-c1-data,destination=/var/lib/etcd',
      'localhost/etcd:v3.6.16',
      '/usr/local/bin/etcd',
      '--name=c1',
      '--data-dir',
      '/var/lib/etcd',
    ]);
  });

  it("reads docker's shape (an entrypoint list, a user network with its address) and carries them", () => {
    const docker = {
      ...PODMAN,
      Name: '/etcd-c1',
      ImageName: undefined,
      Config: { ...PODMAN.Config, Image: 'etcd:3.5', Entrypoint: ['/usr/local/bin/etcd'], Cmd: ['--name=c1'], Hostname: 'etcd1' },
      HostConfig: { ...PODMAN.HostConfig, NetworkMode: 'etcdnet', RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 } },
      NetworkSettings: { Networks: { etcdnet: { IPAddress: '172.20.0.11', Aliases: ['etcd1', '49e6887078f4'] } } },
    };
    const s = parseInspect(docker);
    expect(s).toMatchObject({ name: 'etcd-c1', image: 'etcd:3.5', entrypoint: ['/usr/local/bin/etcd'], argv: ['/usr/local/bin/etcd', '--name=c1'] });
    const a = createArgs({ settings: s, name: 'etcd-c1', image: 'etcd:3.6', member: 'c1' });
    expect(a.join(' ')).toContain('--hostname etcd1');
    expect(a.join(' ')).toContain('--network etcdnet --ip 172.20.0.11 --network-alias etcd1');
    expect(a.join(' ')).toContain('--restart on-failure:3');
    expect(a.slice(-4)).toEqual(['--entrypoint', '["/usr/local/bin/etcd"]', 'etcd:3.6', '--name=c1']);
  });

  it("says etcd's own words when a start exits: the flag error before its usage text, a panic's line", () => {
    expect(lastWords('flag provided but not defined: -enable-v2\nUsage:\n  etcd [flags]\n  Start an etcd server.\n')).toBe(
      'flag provided but not defined: -enable-v2',
    );
    expect(lastWords('{"level":"info","msg":"starting"}\n{"level":"fatal","msg":"discovery failed","error":"boom"}\n')).toBe('discovery failed: boom');
  });
});

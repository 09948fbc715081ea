import { describe, expect, it } from 'vitest';
import { parseClusterFile } from '../../src/commands/kv/lib/cluster-file.js';
import { CommandDriver } from '../../src/kv/drivers/command.js';
import { renderTemplate } from '../../src/kv/templates/argv.js';
import { expandSystemd } from '../../src/kv/drivers/systemd.js';

const vars = { host: 'infra2', name: 'infra2', endpoint: 'https://10.0.0.2:2379', version: '3.3', bin: '', run: 'r1' };

describe('driver preset type: systemd (expands to command templates)', () => {
  it('one unit: stop, start and running over ssh with sudo', () => {
    const t = expandSystemd({ type: 'systemd' });
    expect(renderTemplate(t.stop, vars)).toEqual(['ssh', '--', 'infra2', 'sudo', 'systemctl', 'stop', 'etcd']);
    expect(renderTemplate(t.start, vars)).toEqual(['ssh', '--', 'infra2', 'sudo', 'systemctl', 'start', 'etcd']);
    expect(renderTemplate(t.running, vars)).toEqual(['ssh', '--', 'infra2', 'systemctl', 'is-active', '--quiet', 'etcd']);
    expect(t.startByVersion).toBeUndefined();
    expect(t.config).toBeUndefined();
  });

  it("per-version units: start the version's unit, stop and check all of them", () => {
    const t = expandSystemd({ type: 'systemd', units: { '3.2': 'etcd-3.2', '3.3': 'etcd-3.3' }, ssh: 'ssh -l admin', sudo: false });
    expect(renderTemplate(t.startByVersion!['3.3']!, vars)).toEqual(['ssh', '-l', 'admin', '--', 'infra2', 'systemctl', 'start', 'etcd-3.3']);
    expect(renderTemplate(t.startByVersion!['3.2']!, vars)).toEqual(['ssh', '-l', 'admin', '--', 'infra2', 'systemctl', 'start', 'etcd-3.2']);
    expect(renderTemplate(t.stop, vars)).toEqual(['ssh', '-l', 'admin', '--', 'infra2', 'systemctl', 'stop', 'etcd-3.2', 'etcd-3.3']);
    expect(renderTemplate(t.running, vars)).toEqual(['ssh', '-l', 'admin', '--', 'infra2', 'systemctl', 'is-active', '--quiet', 'etcd-3.2', 'etcd-3.3']);
  });

  it("per-version binaries: the link the unit runs points at the version's binary, then the unit starts", () => {
    const t = expandSystemd({ type: 'systemd', bins: { '3.2': '/opt/etcd-v3.2.32/etcd', '3.3': '/opt/etcd-v3.3.27/etcd' }, binLink: '/usr/local/bin/etcd' });
    // the stage default: each version's binary on the host answers its --version before the hop's first stop
    expect(renderTemplate(t.stageByVersion!['3.3']!, vars)).toEqual(['ssh', '--', 'infra2', '/opt/etcd-v3.3.27/etcd', '--version']);
    expect(renderTemplate(t.startByVersion!['3.3']!, vars)).toEqual([
      'ssh',
      '--',
      'infra2',
      'sudo',
      'ln',
      '-sfn',
      '/opt/etcd-v3.3.27/etcd',
      '/usr/local/bin/etcd',
      '&&',
      'sudo',
      'systemctl',
      'start',
      'etcd',
    ]);
    expect(() => expandSystemd({ type: 'systemd', bins: { '3.3': '/x' } })).toThrow(/bins needs binLink/);
    expect(() => expandSystemd({ type: 'systemd', unit: 'a', units: { '3.3': 'b' } })).toThrow(/not both/);
  });

  it('config file ({version}: the target) and data dir: the config check and backups; no v2-size template (du of member/snap counts the v3 db)', () => {
    const t = expandSystemd({ type: 'systemd', configFile: '/etc/etcd/etcd-{version}.yml', dataDir: '/var/lib/etcd' });
    expect(renderTemplate(t.config!, vars)).toEqual(['ssh', '--', 'infra2', 'cat', '/etc/etcd/etcd-3.3.yml']);
    // sparse: a WAL segment is 64 MB preallocated from its first record; the copy takes what was written
    expect(renderTemplate(t.backup!, vars)).toEqual(['ssh', '--', 'infra2', 'sudo', 'cp', '-a', '--sparse=always', '/var/lib/etcd', '/var/lib/etcd.bak-r1']);
    // removed once its hop is done (the hop's restore point is the way back then)
    expect(renderTemplate(t.dropBackup!, vars)).toEqual(['ssh', '--', 'infra2', 'sudo', 'rm', '-rf', '/var/lib/etcd.bak-r1']);
    // --settle auto measures the v2 store itself through the trial template (its newest .snap, else the WAL's v2 writes)
    expect(t.v2Size).toBeUndefined();
    expect(renderTemplate(t.trial!, vars)).toEqual(['ssh', '--', 'infra2', 'sudo', 'sh', '-s']);
  });

  it('data dir: --on-failure rollback puts the backup back; kv restore checks the host, keeps the old dir, restores with the new token', () => {
    const t = expandSystemd({ type: 'systemd', dataDir: '/var/lib/etcd', etcdctl: '/opt/etcd-v3.2.32/etcdctl' });
    expect(renderTemplate(t.restoreBackup!, vars)).toEqual([
      'ssh',
      '--',
      'infra2',
      'sudo',
      'mv',
      '/var/lib/etcd',
      '/var/lib/etcd.failed-r1',
      '&&',
      'sudo',
      'cp',
      '-a',
      '/var/lib/etcd.bak-r1',
      '/var/lib/etcd',
    ]);
    const rv = {
      ...vars,
      snapshot: '/var/backups/etcd.db',
      peer: 'https://10.0.0.2:2380',
      cluster: 'infra1=https://10.0.0.1:2380,infra2=https://10.0.0.2:2380',
      token: 'opsctl-restore-x',
    };
    expect(renderTemplate(t.restoreCheck!, rv)).toEqual(['ssh', '--', 'infra2', 'test', '-d', '/var/lib/etcd', '&&', 'test', '-f', '/var/backups/etcd.db']);
    expect(renderTemplate(t.restore!, rv).join(' ')).toBe(
      'ssh -- infra2 sudo mv /var/lib/etcd /var/lib/etcd.before-restore-r1 && sudo env ETCDCTL_API=3 /opt/etcd-v3.2.32/etcdctl snapshot restore /var/backups/etcd.db ' +
        "--name infra2 --initial-cluster 'infra1=https://10.0.0.1:2380,infra2=https://10.0.0.2:2380' --initial-cluster-token" +
        ' opsctl-restore-x ' +
        '--initial-advertise-peer-urls https://10.0.0.2:2380 --data-dir /var/lib/etcd && sudo chown -R --reference=/var/lib/etcd.before-restore-r1 /var/lib/etcd',
    );
  });

  it('a cluster file with type: systemd gives the command driver; a bad preset is a usage error naming the file', async () => {
    const ok = await parseClusterFile(
      'members:\n  - {name: infra1, endpoint: "https://10.0.0.1:2379", host: infra1}\ndriver: {type: systemd, unit: etcd-server, configFile: /etc/etcd.yml}\n',
      '/c.yaml',
    );
    expect(ok.driver).toMatchObject({ type: 'command', stop: 'ssh {host} sudo systemctl stop etcd-server', config: 'ssh {host} cat /etc/etcd.yml' });
    await expect(
      parseClusterFile('members:\n  - {name: a, endpoint: "http://x:2379"}\ndriver: {type: systemd, bins: {"3.3": /x}}\n', '/c.yaml'),
    ).rejects.toThrow(/--cluster \/c\.yaml: driver: bins needs binLink/);
    await expect(parseClusterFile('members:\n  - {name: a, endpoint: "http://x:2379"}\ndriver: {type: systemd, unitt: x}\n', '/c.yaml')).rejects.toThrow(
      /driver/,
    );
  });

  it('kv restore onto 3.5 or 3.6 runs etcdutl snapshot restore on the host (3.6 has no etcdctl snapshot restore); onto 3.4 etcdctl', async () => {
    const t = expandSystemd({ type: 'systemd', dataDir: '/var/lib/etcd', etcdctl: '/opt/etcd-v3.4/etcdctl', etcdutl: '/opt/etcd-v3.6.16/etcdutl' });
    const ran: string[][] = [];
    const exec = ((file: string, args: string[]) => {
      ran.push([file, ...args]);
      return Promise.resolve({ exitCode: 0, stdout: '', stderr: '' });
    }) as unknown as ConstructorParameters<typeof CommandDriver>[1];
    const d = new CommandDriver(t, exec, {});
    const m = { name: 'infra2', endpoint: 'https://10.0.0.2:2379', host: 'infra2' };
    const req = (version: string) => ({
      snapshot: '/var/backups/etcd.db',
      name: 'infra2',
      peerUrl: 'https://10.0.0.2:2380',
      initialCluster: 'infra2=https://10.0.0.2:2380',
      token: 'opsctl-restore-x',
      run: 'r1',
      target: { version },
    });
    for (const v of ['3.5', '3.6', '3.7']) {
      // refused before any stop until now: the one restore template ran etcdctl snapshot restore
      await expect(d.checkRestore(m, req(v))).resolves.toBeTypeOf('string');
      ran.length = 0;
      await d.restoreData(m, req(v));
      const line = ran.find((a) => a.includes('restore'))!.join(' ');
      expect(line).toContain('sudo /opt/etcd-v3.6.16/etcdutl snapshot restore /var/backups/etcd.db --name infra2');
      expect(line).not.toContain('etcdctl');
    }
    ran.length = 0;
    await d.restoreData(m, req('3.4'));
    expect(ran[0]!.join(' ')).toContain('sudo env ETCDCTL_API=3 /opt/etcd-v3.4/etcdctl snapshot restore');
    // the default etcdutl is the host's PATH one
    expect(
      renderTemplate(expandSystemd({ type: 'systemd', dataDir: '/d' }).restoreByVersion!['3.6']!, {
        ...vars,
        snapshot: 's',
        peer: 'p',
        cluster: 'c',
        token: 't',
      }),
    ).toContain('etcdutl');
  });
});

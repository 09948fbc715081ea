import { describe, expect, it } from 'vitest';
import { expandSystemd } from '../../src/kv/drivers/systemd.js';
import { backupNeeds, parseDf, parseDu, parseSpaceReport, SpaceReportError } from '../../src/kv/drivers/space.js';

/** Issue 27 item 5, the command driver: the space template's `du -sk` then `df -Pk` output, read on opsctl's side. */
describe('reading du -sk and df -Pk output from a member host', () => {
  it('GNU coreutils shapes', () => {
    const text = [
      '524288\t/var/lib/etcd',
      'Filesystem     1024-blocks     Used Available Capacity Mounted on',
      '/dev/sda1         41152736 20012344  19026908      52% /var',
      '',
    ].join('\n');
    expect(parseSpaceReport(text)).toEqual({ dataDir: '/var/lib/etcd', dataBytes: 524288 * 1024, free: 19026908 * 1024, mount: '/var' });
  });

  it('busybox shapes (spaces, not tabs; a long device name; 1K-blocks header)', () => {
    expect(parseDu('12 /data/etcd')).toEqual({ bytes: 12 * 1024, path: '/data/etcd' });
    const df = 'Filesystem           1K-blocks      Used Available Use% Mounted on\n/dev/mapper/vg0-lv_var_lib_etcd_data 1000 600 400 60% /\n';
    expect(parseDf(df)).toEqual({ free: 400 * 1024, mount: '/' });
    expect(parseDf('Filesystem 512-blocks Used Available Capacity Mounted on\noverlay 100 50 50 50% /x\n').free).toBe(50 * 512);
  });

  it('a mount point and a data dir with spaces', () => {
    const text = '2048\t/srv/etcd data/m1\nFilesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sdb1 1000 10 990 1% /srv/etcd data\n';
    expect(parseSpaceReport(text)).toMatchObject({ dataDir: '/srv/etcd data/m1', dataBytes: 2048 * 1024, free: 990 * 1024, mount: '/srv/etcd data' });
  });

  it('garbage is a clear error naming what was expected', () => {
    expect(() => parseSpaceReport('')).toThrow(SpaceReportError);
    expect(() => parseSpaceReport('')).toThrow(/no `du -sk` line/);
    expect(() => parseSpaceReport('12\t/d\n')).toThrow(/no `df -Pk` header/);
    expect(() =>
      parseSpaceReport('du: cannot access /d: Permission denied\nFilesystem 1024-blocks Used Available Capacity Mounted on\n/dev/x 1 1 1 1% /\n'),
    ).toThrow(/not a `du -sk` line/);
    expect(() => parseSpaceReport('12\t/d\nFilesystem 1024-blocks Used Available Capacity Mounted on\nsomething odd\n')).toThrow(/no `df -Pk` row/);
    expect(() => parseDf('Filesystem Size Used Avail Use% Mounted on\n/dev/x 1G 1G 1G 1% /\n')).toThrow(/no block size/);
  });

  it("the need is space.ts's one margin: size + 10% + 64 MiB", () => {
    expect(backupNeeds(100 * 1024 * 1024)).toBe(110 * 1024 * 1024 + 64 * 1024 * 1024);
  });

  it('the systemd preset with a dataDir measures beside it (each path one word)', () => {
    expect(expandSystemd({ type: 'systemd', dataDir: '/var/lib/etcd' }).space).toBe('ssh {host} sudo du -sk /var/lib/etcd && df -Pk /var/lib');
    expect(expandSystemd({ type: 'systemd', dataDir: '/srv/etcd data/m', sudo: false }).space).toBe(
      'ssh {host} du -sk "/srv/etcd data/m" && df -Pk "/srv/etcd data"',
    );
    expect(expandSystemd({ type: 'systemd' }).space).toBeUndefined();
  });
});

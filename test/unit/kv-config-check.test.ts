import { describe, expect, it } from 'vitest';
import { checkConfig, checkClusterConfig } from '../../src/kv/rules/config-check.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';

const F = '/etc/etcd/etcd.conf.yml';

describe("3.3 configuration check (the seed's interface changes)", () => {
  it('a numeric auto-compaction-retention: member, file, line and the fix', async () => {
    const p = await checkConfig('name: infra1\ndata-dir: /var/lib/etcd\nauto-compaction-retention: 24\n', F, 'infra1');
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ member: 'infra1', file: F, line: 3 });
    expect(p[0]?.problem).toMatch(/the number 24: 3\.3 reads a string/);
    expect(p[0]?.fix).toMatch(/"24".*"24h".*--auto-compaction-retention=24/);
  });

  it('strings that 3.3 accepts pass: hours, durations, revision counts; no setting at all passes', async () => {
    for (const text of [
      'auto-compaction-retention: "24"\n',
      "auto-compaction-retention: '1h30m'\nauto-compaction-mode: periodic\n",
      'auto-compaction-mode: revision\nauto-compaction-retention: "1000"\n',
      'max-request-bytes: 1572864\n',
      'name: x\n',
      '',
    ])
      expect(await checkConfig(text, F, 'm'), text).toEqual([]);
  });

  it('periodic compaction with a value that is not a duration; revision mode with a non-count; an unknown mode', async () => {
    const a = await checkConfig('auto-compaction-mode: periodic\nauto-compaction-retention: "1 day"\n', F, 'm');
    expect(a[0]).toMatchObject({ line: 2 });
    expect(a[0]?.problem).toMatch(/"1 day" is not a duration/);
    const b = await checkConfig('auto-compaction-mode: revision\nauto-compaction-retention: "24h"\n', F, 'm');
    expect(b[0]?.problem).toMatch(/not a revision count/);
    const c = await checkConfig('auto-compaction-mode: hourly\n', F, 'm');
    expect(c[0]?.problem).toMatch(/neither periodic nor revision/);
  });

  it('request-size settings: not an integer, or above the 2 MiB a 3.3 client sends by default', async () => {
    const a = await checkConfig('max-request-bytes: "1.5MiB"\n', F, 'm');
    expect(a[0]?.problem).toMatch(/not a whole number of bytes/);
    const b = await checkConfig('name: m\nmax-request-bytes: 10485760\n', F, 'm');
    expect(b[0]).toMatchObject({ line: 2 });
    expect(b[0]?.problem).toMatch(/above what 3\.3 clients send by default \(2097152 bytes\)/);
    expect(b[0]?.fix).toMatch(/MaxCallSendMsgSize/);
  });

  it('a file that is not YAML is a problem with its line', async () => {
    const p = await checkConfig('name: [unclosed\n', F, 'm');
    expect(p[0]?.problem).toMatch(/not valid YAML/);
  });

  it('every member is read through the driver with the target; none without a config reader', async () => {
    const seen: string[] = [];
    const driver = {
      readConfig: async (m: { name: string }, t: { version: string }) => {
        seen.push(`${m.name}@${t.version}`);
        return { file: `/etc/${m.name}.yml`, text: m.name === 'b' ? 'auto-compaction-retention: 1\n' : '' };
      },
    } as unknown as MemberDriver;
    const members = ['a', 'b'].map((name) => ({ name, endpoint: 'http://x' }));
    const p = await checkClusterConfig(members, driver, { version: '3.3' }, () => undefined);
    expect(seen).toEqual(['a@3.3', 'b@3.3']);
    expect(p.map((x) => `${x.member} ${x.file}:${x.line}`)).toEqual(['b /etc/b.yml:1']);
    expect(await checkClusterConfig(members, {} as MemberDriver, { version: '3.3' }, () => undefined)).toEqual([]);
  });
});

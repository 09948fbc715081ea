import { describe, expect, it } from 'vitest';
import { settingsOutput } from '../../src/kv/drivers/start-settings.js';
import { expandSystemd, parseUnit, unitEnvFile, unitStart } from '../../src/kv/drivers/systemd.js';
import { renderTemplate } from '../../src/kv/templates/argv.js';

/** `systemctl cat etcd-3.6.service` as it prints a unit and a drop-in: each file headed by "# /path". */
const UNIT = `# /etc/systemd/system/etcd-3.6.service
[Unit]
Description=etcd 3.6
# ExecStart=/not/this
[Service]
Type=notify
User=etcd
Environment=ETCD_NAME=%N "ETCD_INITIAL_CLUSTER_STATE=existing" 'GOMAXPROCS=2'
Environment=OTHER=not-etcd
EnvironmentFile=-/etc/default/etcd
EnvironmentFile=/etc/etcd/3.6.env
WorkingDirectory=-/var/lib/etcd
ExecStart=/opt/etcd-v3.6.16/etcd
ExecStart=/opt/etcd-v3.6.16/etcd \\
  --config-file /etc/etcd/3.6.yaml \\
  $ETCD_EXTRA "--log-level=\${LOG_LEVEL}"
Restart=always

# /etc/systemd/system/etcd-3.6.service.d/10-limits.conf
[Service]
LimitNOFILE=40000
`;

describe('a systemd unit as the settings a start on a version runs with (systemctl cat)', () => {
  it('the last ExecStart= with its continuations, Environment= quoted, the environment files in order, %N from the unit name', () => {
    const u = parseUnit(UNIT);
    if ('why' in u) throw new Error(u.why);
    expect(u.program).toBe('/opt/etcd-v3.6.16/etcd');
    expect(u.envFiles).toEqual([
      { path: '/etc/default/etcd', optional: true },
      { path: '/etc/etcd/3.6.env', optional: false },
    ]);
    expect(u.cwd).toBe('/var/lib/etcd');
    // an environment file overrides Environment=; $VAR splits at blanks, ${VAR} stays one word; only ETCD_* and GO* kept
    const s = unitStart(u, [unitEnvFile('# comment\nETCD_EXTRA="--enable-v2=true --quota-backend-bytes=1"\nLOG_LEVEL=warn\n'), { ETCD_NAME: 'm1' }]);
    expect(s.args).toEqual(['--config-file', '/etc/etcd/3.6.yaml', '--enable-v2=true', '--quota-backend-bytes=1', '--log-level=warn']);
    expect(s.env).toEqual({
      ETCD_NAME: 'm1',
      ETCD_INITIAL_CLUSTER_STATE: 'existing',
      GOMAXPROCS: '2',
      ETCD_EXTRA: '--enable-v2=true --quota-backend-bytes=1',
    });
    expect(unitStart(u, []).env.ETCD_NAME).toBe('etcd-3.6');
  });

  it('an empty ExecStart= or Environment= resets (a drop-in replacing the command); `:` expands nothing, `@` drops argv[0]', () => {
    const dropIn = `${UNIT}\n[Service]\nExecStart=\nExecStart=:@/opt/etcd-v3.6.16/etcd etcd --name \${NAME}\nEnvironment=\nEnvironment=NAME=x\n`;
    const u = parseUnit(dropIn);
    if ('why' in u) throw new Error(u.why);
    expect(unitStart(u, []).args).toEqual(['--name', '${NAME}']);
    expect(u.env).toEqual({ NAME: 'x' });
  });

  it('refuses what it cannot read, naming it: no ExecStart, a shell wrapper, a host specifier, an unclosed quote', () => {
    const why = (text: string) => {
      const u = parseUnit(text);
      return 'why' in u ? u.why : '';
    };
    expect(why('[Service]\nType=notify\n')).toMatch(/no ExecStart= in its \[Service\] section/);
    expect(why('[Service]\nExecStart=/bin/bash -c "GOMAXPROCS=$(nproc) /usr/bin/etcd"\n')).toMatch(/runs \/bin\/bash, not etcd with its flags/);
    expect(why('# /lib/systemd/system/etcd.service\n[Service]\nExecStart=/usr/bin/etcd --name %H\n')).toMatch(/the specifier %H, which opsctl does not expand/);
    expect(why('[Service]\nExecStart=/usr/bin/etcd --name "m1\n')).toMatch(/an unclosed "/);
  });

  it("settingsOutput reads a unit's environment files on the host: an optional missing one is skipped, a required one named", async () => {
    const files = new Map([['/etc/etcd/3.6.env', 'ETCD_EXTRA=--enable-v2\n']]);
    const read = (f: string) => Promise.resolve(files.has(f) ? { text: files.get(f)! } : { why: `cat: ${f}: No such file or directory`, missing: true });
    const s = await settingsOutput(UNIT, 'the settings template for 3.6', read);
    if ('why' in s) throw new Error(s.why);
    expect(s.args).toContain('--enable-v2');
    expect(s.cwd).toBe('/var/lib/etcd');
    expect(s.from.env).toMatch(/with \/etc\/default\/etcd, \/etc\/etcd\/3.6.env/);
    files.clear();
    const missing = await settingsOutput(UNIT, 'the settings template for 3.6', read);
    expect('why' in missing && missing.why).toMatch(
      /names EnvironmentFile=\/etc\/etcd\/3.6.env, which cannot be read on the member's host: cat: .*No such file/,
    );
    // the line format is unchanged
    expect(await settingsOutput('--name=m1\nETCD_DATA_DIR=/d\n', 'x', read)).toEqual({
      args: ['--name=m1'],
      env: { ETCD_DATA_DIR: '/d' },
      from: { args: 'x', env: 'x' },
    });
  });

  it("the systemd preset reads each version's unit with systemctl cat over ssh", () => {
    const vars = { host: 'infra2', name: 'infra2', endpoint: 'https://10.0.0.2:2379', version: '3.6', bin: '', run: 'r1' };
    const t = expandSystemd({ type: 'systemd', units: { '3.5': 'etcd-3.5', '3.6': 'etcd-3.6' } });
    expect(renderTemplate(t.settingsByVersion!['3.6']!, vars)).toEqual(['ssh', '--', 'infra2', 'systemctl', 'cat', 'etcd-3.6']);
    expect(renderTemplate(expandSystemd({ type: 'systemd' }).settings!, vars)).toEqual(['ssh', '--', 'infra2', 'systemctl', 'cat', 'etcd']);
  });
});

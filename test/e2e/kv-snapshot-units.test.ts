import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { requireProgram } from '../helpers/e2e.js';

const EXAMPLES = fileURLToPath(new URL('../../docs/examples/', import.meta.url));
const ANALYZE = '/usr/bin/systemd-analyze';

/**
 * The systemd units of docs/kv-upgrade.md ("Off-host snapshots") through systemd's own parser:
 * `systemd-analyze verify` (the ExecStart binary pointed at the built opsctl, which verify requires to
 * exist), clean; a unit with a misspelt key is caught, so the check is not vacuous. The CronJob parses
 * as YAML and runs the same command line. Its flags are opsctl's real ones.
 */
describe.runIf(requireProgram('systemd-analyze (Debian: systemd)', ANALYZE))('docs/examples: the snapshot timer units and CronJob', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-units-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const unit = (name: string) => readFileSync(join(EXAMPLES, name), 'utf8').replaceAll('/usr/local/bin/opsctl', BIN);
  const verify = (...files: string[]) => spawnSync(ANALYZE, ['verify', '--man=no', ...files], { encoding: 'utf8' });

  it('systemd-analyze verify passes the .service and .timer, and fails a misspelt key', () => {
    for (const f of ['opsctl-kv-snapshot.service', 'opsctl-kv-snapshot.timer']) writeFileSync(join(dir, f), unit(f));
    const ok = verify(join(dir, 'opsctl-kv-snapshot.service'), join(dir, 'opsctl-kv-snapshot.timer'));
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stderr.trim()).toBe('');
    writeFileSync(join(dir, 'typo.service'), unit('opsctl-kv-snapshot.service').replace('ReadWritePaths', 'ReadWritePath'));
    const bad = verify(join(dir, 'typo.service'));
    expect(bad.stderr).toContain("Unknown key 'ReadWritePath'");
  });

  it("the units' and the CronJob's opsctl command lines pass opsctl's own flag parser (they get as far as the S3 store)", () => {
    const service = readFileSync(join(EXAMPLES, 'opsctl-kv-snapshot.service'), 'utf8');
    const lines = [...service.matchAll(/^ExecStart(?:Post)?=\/usr\/local\/bin\/opsctl (.+)$/gm)].map((m) => m[1]!.split(' '));
    const job = parse(readFileSync(join(EXAMPLES, 'opsctl-kv-snapshot-cronjob.yaml'), 'utf8')) as {
      spec: { jobTemplate: { spec: { template: { spec: { containers: { command: string[] }[] } } } } };
    };
    const command = job.spec.jobTemplate.spec.template.spec.containers[0]!.command;
    expect(command.slice(0, 3)).toEqual(['npx', '--yes', 'opsctl']);
    lines.push(command.slice(3));
    expect(lines.length).toBe(3);
    for (const argv of lines) {
      // an S3 endpoint nobody listens on: every flag parsed and checked, then the store is unreachable (exit 1, not 2)
      const r = spawnSync(process.execPath, [BIN, ...argv], {
        encoding: 'utf8',
        env: {
          ...process.env,
          OPSCTL_CONFIG_DIR: dir,
          AWS_ENDPOINT_URL: 'http://127.0.0.1:1',
          AWS_ACCESS_KEY_ID: 'k',
          AWS_SECRET_ACCESS_KEY: 's',
          AWS_MAX_ATTEMPTS: '1',
        },
      });
      expect(r.status, `${argv.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr, argv.join(' ')).toMatch(/^X cannot (write to|list) s3:\/\/etcd-backups\/prod\//);
    }
    expect(existsSync(join(EXAMPLES, 'opsctl-kv-snapshot.timer'))).toBe(true);
  });
});

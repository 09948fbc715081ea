import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKey } from '../../src/kv/journal/journal.js';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';

/**
 * Bad input the kv upgrade reads from disk, refused before anything else with the file named and the
 * fix: a wrong-shaped journal (exit 1, the file left byte for byte as it was, for kv upgrade and kv
 * rollback alike) and a cluster file with a duplicate member or an unknown {placeholder} (exit 2, even
 * with --dry-run). The built binary; the endpoints are ports nothing listens on (nothing to change).
 */
const cfg = tempConfigDir('opsctl-kvj-');
const env = { OPSCTL_CONFIG_DIR: cfg.dir };
const eps = ['http://127.0.0.1:9', 'http://127.0.0.1:7'];
const journalFile = join(cfg.dir, 'data', 'kv', 'journals', `${clusterKey(eps)}.json`);
// {host}, not {name}: the members never answer here, and a name used in a command must be one etcd would give
// (the host:port stand-in is refused before anything runs), while these cases are about the journal
const driver = ['--stop-cmd', 'true {host}', '--start-cmd', 'true {host}', '--running-cmd', 'false {host}'];
const good = {
  version: 1,
  id: '20260101T000000-abcdef',
  cluster: clusterKey(eps),
  source: '3.2',
  target: '3.3',
  allowSameVersion: false,
  status: 'halted',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  owner: { pid: 1, host: 'h' },
  members: [{ name: 'kv1', id: '1', endpoint: eps[0], fromVersion: '3.2.32', action: 'upgrade', reason: '', wasLeader: false }],
  previous: { kv1: { version: '3.2' } },
  steps: [{ id: 'kv1/stop', member: 'kv1', kind: 'stop', status: 'done' }],
  snapshots: [],
};

beforeAll(() => mkdirSync(join(cfg.dir, 'data', 'kv', 'journals'), { recursive: true }));
afterAll(() => cfg.cleanup());

describe('a wrong-shaped journal is named with its path and the fix, exit 1, never rewritten', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['"members": null', JSON.stringify({ ...good, members: null }), /members: .*(array|null)/i],
    [
      'a step naming an unknown member',
      JSON.stringify({ ...good, steps: [{ id: 'kv9/stop', member: 'kv9', kind: 'stop', status: 'done' }] }),
      /step kv9\/stop names member "kv9", which is not one of the journal's members/,
    ],
    ['truncated JSON', JSON.stringify(good).slice(0, 80), /not JSON \(truncated\?\)/],
  ];
  it.each(cases)('%s: kv upgrade --dry-run, kv upgrade and kv rollback refuse', async (_what, text, why) => {
    writeFileSync(journalFile, text);
    for (const argv of [
      ['kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', eps.join(','), '--request-timeout', '500ms'],
      ['kv', 'upgrade', '--to', '3.3', '--yes', '--no-backup', '--endpoints', eps.join(','), ...driver, '--request-timeout', '500ms'],
      ['kv', 'rollback', '--endpoints', eps.join(','), ...driver, '--request-timeout', '500ms'],
    ]) {
      const r = await runBin(argv, { env });
      expect(r.exitCode, `${argv.join(' ')}\n${String(r.stderr)}`).toBe(1);
      expect(r.stderr).toContain(`the kv upgrade journal ${journalFile} cannot be used`);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toContain(`mv ${journalFile} ${journalFile}.bad`);
      expect(r.stderr).not.toMatch(/unexpected error/i);
      expect(readFileSync(journalFile, 'utf8')).toBe(text);
    }
  });
});

describe('a cluster file is checked when parsed (exit 2 naming the file, the member or field, and the fix), --dry-run included', () => {
  const file = join(cfg.dir, 'prod.yaml');
  it('a member name listed twice', async () => {
    writeFileSync(file, `members:\n  - {name: kv1, endpoint: "${eps[0]}"}\n  - {name: kv1, endpoint: "${eps[1]}"}\n`);
    const r = await runBin(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--cluster', file], { env });
    expect(r.exitCode, String(r.stderr)).toBe(2);
    expect(r.stderr).toContain(`--cluster ${file}: members.1.name: "kv1" is listed twice`);
    expect(r.stderr).toMatch(/give each member its etcd name/);
  });
  it('an unknown {placeholder} in a driver template, and in a --*-cmd flag', async () => {
    writeFileSync(
      file,
      `members:\n  - {name: kv1, endpoint: "${eps[0]}"}\ndriver: {type: command, stop: "ssh {hots} systemctl stop etcd", start: "true", running: "true"}\n`,
    );
    const r = await runBin(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--cluster', file], { env });
    expect(r.exitCode, String(r.stderr)).toBe(2);
    expect(r.stderr).toContain(`--cluster ${file}: driver.stop: unknown placeholder {hots} (known: {host}, {name}, {endpoint}, {version}, {bin})`);
    expect(r.stderr).toMatch(/fix the template in the file/);
    const f = await runBin(
      [
        'kv',
        'upgrade',
        '--to',
        '3.3',
        '--dry-run',
        '--endpoints',
        eps.join(','),
        '--stop-cmd',
        'true',
        '--start-cmd',
        'true',
        '--running-cmd',
        'true',
        '--backup-cmd',
        'cp -a /d /d.{runn}',
      ],
      { env },
    );
    expect(f.exitCode, String(f.stderr)).toBe(2);
    expect(f.stderr).toContain('--backup-cmd: unknown placeholder {runn} (known: {host}, {name}, {endpoint}, {version}, {bin}, {run})');
  });
});

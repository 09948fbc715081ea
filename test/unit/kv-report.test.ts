import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Journal } from '../../src/kv/journal/journal.js';
import { buildReport, snapshotTrailerHash } from '../../src/kv/report/report.js';
import { reportHtml } from '../../src/kv/report/html.js';

const EVIL = '<img src=x onerror="alert(1)">';

/** A journal as the executor leaves it after a halt at the second member's wait-healthy. */
function journal(): Journal {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, s)).toISOString();
  const member = (name: string, t: number, halted = false) => [
    { id: `${name}/snapshot`, member: name, kind: 'snapshot', status: 'done', startedAt: at(t), finishedAt: at(t + 1), ms: 1000, detail: 'ok' },
    { id: `${name}/stop`, member: name, kind: 'stop', status: 'done', startedAt: at(t + 1), finishedAt: at(t + 2), ms: 1000 },
    {
      id: `${name}/wait-healthy`,
      member: name,
      kind: 'wait-healthy',
      status: halted ? 'failed' : 'done',
      startedAt: at(t + 2),
      finishedAt: halted ? undefined : at(t + 5),
      ms: 3000,
      error: halted ? `never healthy ${EVIL}` : undefined,
    },
  ];
  return {
    version: 1,
    id: 'run-1',
    cluster: 'c1',
    source: '3.2',
    target: '3.3',
    allowSameVersion: false,
    status: 'halted',
    createdAt: at(0),
    updatedAt: at(20),
    owner: { pid: 1, host: 'h' },
    members: [
      {
        name: 'a',
        id: '18446744073709551615',
        endpoint: 'http://10.0.0.1:2379',
        fromVersion: '3.2.32',
        action: 'upgrade',
        reason: '3.2 → 3.3',
        wasLeader: false,
      },
      { name: EVIL, id: '2', endpoint: 'http://10.0.0.2:2379', fromVersion: '3.2.32', action: 'upgrade', reason: '3.2 → 3.3', wasLeader: true },
    ],
    previous: {},
    steps: [
      ...member('a', 0),
      ...member(EVIL, 10, true),
      { id: 'cluster/wait-cluster-version', kind: 'wait-cluster-version', status: 'pending' },
    ] as Journal['steps'],
    snapshots: [{ member: 'a', file: '/nowhere/a.db', revision: '7', bytes: 100 }],
    halt: { step: `${EVIL}/wait-healthy`, reason: `never healthy ${EVIL}`, rollback: 'opsctl kv rollback' },
    rollback: [{ member: EVIL, to: '3.2', at: at(30), ms: 2500 }],
  };
}

describe('kv upgrade report', () => {
  it('down windows run from the stop until healthy again; a member not back has an open window', () => {
    const r = buildReport(journal(), '/j.json', () => undefined);
    expect(r.members[0]?.down).toEqual({ from: '2026-01-01T10:00:01.000Z', to: '2026-01-01T10:00:05.000Z', ms: 4000, back: { on: '3.3', by: 'upgrade' } });
    // the halted member that kv rollback brought back: its window closes there, on its old version
    expect(r.members[1]?.down).toEqual({
      from: '2026-01-01T10:00:11.000Z',
      to: '2026-01-01T10:00:30.000Z',
      ms: 19_000,
      back: { on: '3.2', by: 'kv rollback' },
    });
    const open = journal();
    delete open.rollback;
    expect(buildReport(open, '/j.json', () => undefined).members[1]?.down).toEqual({ from: '2026-01-01T10:00:11.000Z', to: undefined, ms: undefined });
    expect(r.span).toEqual({ from: '2026-01-01T10:00:00.000Z', to: '2026-01-01T10:00:30.000Z' });
    expect(r.plan.map((p) => p.id)).toEqual(['18446744073709551615', '2']);
    expect(r.clusterVersion).toMatchObject({ from: '3.2', to: '3.3', status: 'pending' });
    expect(r.health.map((h) => `${h.member}:${h.status}`)).toEqual(['a:done', `${EVIL}:failed`]);
    expect(r.snapshots[0]).toMatchObject({ member: 'a', revision: '7', at: '2026-01-01T10:00:01.000Z', sha256: undefined });
  });

  it('escapes every value from the journal: no markup of a member name, detail or halt reason reaches the page', () => {
    const html = reportHtml(buildReport(journal(), '/j.json', () => undefined));
    expect(html).not.toContain('<img');
    expect(html).toContain('&#60;img src=x onerror=&#34;alert(1)&#34;&#62;');
    expect(html).not.toMatch(/<script|<link|https?:\/\/(?!10\.0\.0)/i);
    expect(html).toContain('file gone');
    expect(html).toMatch(/<table id="rollback">[\s\S]*&#60;img[\s\S]*3\.2[\s\S]*2\.5 s/);
  });

  it("keeps the hop's client checklist and the staging advice (3.2 → 3.3: the seed's client changes)", () => {
    const r = buildReport(journal(), '/j.json', () => undefined);
    expect(r.clients.advice).toMatch(/staging/);
    expect(r.clients.changes.map((c) => c.version)).toEqual(Array(r.clients.changes.length).fill('3.3'));
    expect(r.clients.changes.some((c) => c.change.includes('grpc.WithBlock()'))).toBe(true);
    expect(reportHtml(r)).toMatch(/<h2>Clients: test in staging first<\/h2>[\s\S]*<ul id="clients"><li><b>3\.3<\/b>/);
  });

  it("reads a snapshot hash from the file's trailer (the SHA-256 of its content)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-report-'));
    try {
      const body = Buffer.from('snapshot body');
      const sum = createHash('sha256').update(body).digest();
      writeFileSync(join(dir, 's.db'), Buffer.concat([body, sum]));
      expect(snapshotTrailerHash(join(dir, 's.db'))).toBe(sum.toString('hex'));
      writeFileSync(join(dir, 'short.db'), 'x');
      expect(snapshotTrailerHash(join(dir, 'short.db'))).toBeUndefined();
      expect(snapshotTrailerHash(join(dir, 'missing.db'))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('interruptions and resumes from the runs: a kill -9 (no end written) and a Ctrl-C, each with its resume and the gap', () => {
    const at = (sec: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, sec)).toISOString();
    const j = Object.assign(journal(), {
      status: 'done',
      halt: undefined,
      rollback: undefined,
      runs: [
        { pid: 11, host: 'h', startedAt: at(0), endedAt: at(3), end: 'killed', how: 'the process (pid 11 on h) ended without a word' },
        { pid: 12, host: 'h', startedAt: at(22), endedAt: at(25), end: 'interrupted', how: 'Ctrl-C (SIGINT): stopped at a safe point' },
        { pid: 13, host: 'h', startedAt: at(40), endedAt: at(50), end: 'done' },
      ],
    }) as Journal;
    const r = buildReport(j, '/j.json', () => undefined);
    expect(r.interruptions).toEqual([
      { stoppedAt: at(3), how: 'killed', detail: 'the process (pid 11 on h) ended without a word', resumedAt: at(22), gapMs: 19_000 },
      { stoppedAt: at(25), how: 'interrupted', detail: 'Ctrl-C (SIGINT): stopped at a safe point', resumedAt: at(40), gapMs: 15_000 },
    ]);
    expect(r.span.to).toBe(at(50));
    const html = reportHtml(r);
    expect(html).toMatch(/<table id="interruptions">[\s\S]*killed \(no word from the process\)[\s\S]*19\.0 s[\s\S]*interrupted \(signal\)[\s\S]*Ctrl-C/);
    expect(html).toContain('class="gap"');
  });

  it('a member --on-failure rollback put back is drawn back on its old version; checks not run say why; the restore command and the backups are named', () => {
    const at = (sec: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, sec)).toISOString();
    const j = Object.assign(journal(), {
      rollback: undefined,
      previous: { a: { version: '3.2', binDir: '/opt/etcd 3.2' } },
      putBack: [{ member: EVIL, to: '3.2', at: at(18), downFrom: at(11), detail: 'back on 3.2' }],
      checks: [
        {
          hop: '3.2 → 3.3',
          rule: 'config',
          check: 'the config 3.3 reads',
          where: 'config file',
          member: 'a',
          status: 'not checked',
          detail: 'no config template',
          guide: 'g',
        },
        { hop: '3.2 → 3.3', rule: 'alarms', check: 'no alarm', where: "the member's API", status: 'ok', detail: 'none', guide: 'g' },
      ],
      commands: { rollback: 'opsctl kv rollback --cluster prod.yaml' },
    }) as Journal;
    j.steps.find((s) => s.id === `${EVIL}/stop`)!.status = 'pending';
    // a later member's snapshot, removed as the run finished (the restore point is kept): its recorded hash still shown
    j.snapshots.push({ member: 'b', file: '/nowhere/b.db', revision: '8', bytes: 100, sha256: 'cd'.repeat(32), removed: at(30) });
    const backups = [
      {
        cluster: 'c1',
        run: 'run-1',
        kind: 'upgrade' as const,
        date: at(0),
        bytes: 3000,
        items: [
          { kind: 'snapshot' as const, member: 'a', path: '/data/kv/snapshots/c1/run-1-a.db', bytes: 1000, date: at(0) },
          { kind: 'data-dir' as const, member: 'a', path: '/data/kv/backups/c1/run-1-a', bytes: 2000, date: at(0) },
        ],
      },
      { cluster: 'c1', run: 'other', kind: 'upgrade' as const, date: at(0), bytes: 9, items: [] },
    ];
    const r = buildReport(j, '/j.json', { hash: () => 'ab'.repeat(32), backups: () => backups, exists: () => true });
    expect(r.members[1]?.downs).toEqual([{ from: at(11), to: at(18), ms: 7000, back: { on: '3.2', by: '--on-failure rollback' } }]);
    expect(r.checks.filter((c) => c.status === 'not checked')).toHaveLength(1);
    expect(r.restorePoints).toEqual([
      {
        hop: '3.2 → 3.3',
        file: '/nowhere/a.db',
        revision: '7',
        keys: undefined,
        sha256: 'ab'.repeat(32),
        present: true,
        command: "opsctl kv restore --cluster prod.yaml --snapshot /nowhere/a.db --to-version 3.2 --target-bin '/opt/etcd 3.2'",
      },
    ]);
    expect(r.backups).toMatchObject({ bytes: 3000, dirs: ['/data/kv/snapshots/c1', '/data/kv/backups/c1'] });
    expect(r.snapshots[1]).toMatchObject({ member: 'b', sha256: 'ab'.repeat(32), removed: at(30) });
    const noFile = buildReport(j, '/j.json', { hash: () => undefined, backups: () => backups, exists: () => false });
    expect(noFile.snapshots[1]!.sha256).toBe('cd'.repeat(32));
    const html = reportHtml(r);
    expect(html).toMatch(/<code>\/nowhere\/b\.db<\/code> <span class="muted">removed <time [^>]*>[^<]*<\/time>: the restore point is kept<\/span>/);
    expect(html).not.toMatch(/a\.db<\/code> <span class="muted">removed/);
    expect(html).toMatch(/down 7\.0 s, back on 3\.2 \(--on-failure rollback\)/);
    expect(html).not.toContain('down: not back');
    expect(html).toContain('not checked: no config template');
    expect(html).toContain('opsctl kv restore --cluster prod.yaml --snapshot /nowhere/a.db --to-version 3.2 --target-bin &#39;/opt/etcd 3.2&#39;');
    expect(html).toMatch(/id="backups-total"><b>3\.0 kB<\/b>/);
  });
});

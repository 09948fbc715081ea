import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Journal } from '../../src/kv/journal.js';
import { buildReport, snapshotTrailerHash } from '../../src/kv/report.js';
import { reportHtml } from '../../src/kv/report-html.js';

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
    expect(r.members[0]?.down).toEqual({ from: '2026-01-01T10:00:01.000Z', to: '2026-01-01T10:00:05.000Z', ms: 4000 });
    expect(r.members[1]?.down).toEqual({ from: '2026-01-01T10:00:11.000Z', to: undefined, ms: undefined });
    expect(r.span).toEqual({ from: '2026-01-01T10:00:00.000Z', to: '2026-01-01T10:00:20.000Z' });
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
});

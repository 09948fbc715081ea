import type { Rule } from './types.js';

/**
 * Every hop, a rolling restart too: a member's data dir holds its v3 database beside its v2 data. A
 * member whose member/snap/db is gone (moved, a bad restore) keeps running on the open file, and its
 * next start loses it: 3.3 panics, a later etcd starts without its keys. Refused before any stop.
 */
export function v3DatabaseRule(guide: string): Rule {
  return {
    id: 'v2-without-v3-db',
    check:
      'every member holds a v3 database (member/snap/db) beside its v2 data (member/wal): 3.3 and later panic at start without one, or start without its keys',
    where: ['data dir'],
    severity: 'refuse',
    fix: 'restore member/snap/db from a v3 snapshot of this cluster (etcdctl snapshot restore), or remove the member and add it back empty, before upgrading',
    guide,
    test: (f) =>
      f.members.map((m) => {
        const d = m.layout;
        if (!d)
          return { member: m.name, result: 'not-checked' as const, detail: 'the driver does not know its data dir (a data-dir template, or the sandbox)' };
        if ('why' in d) return { member: m.name, result: 'not-checked' as const, detail: `cannot look at its data dir: ${d.why}` };
        if (!d.exists)
          return {
            member: m.name,
            result: 'problem' as const,
            detail: `its data dir ${d.dir} has no member/ directory: it is not this member's data dir (fix the data-dir template)`,
          };
        if (d.wal && !d.db)
          return {
            member: m.name,
            result: 'problem' as const,
            detail: `${d.dir} holds v2 data (${d.walDir ? `its WAL dir ${d.walDir}` : 'member/wal'}) but no v3 database (member/snap/db is missing): ${f.to === '3.3' ? '3.3 would panic at start' : `etcd ${f.to} would not start on it with its keys`}`,
          };
        return {
          member: m.name,
          result: 'ok' as const,
          detail: `${d.dir}: ${d.walDir ? `its WAL dir ${d.walDir}` : 'member/wal'} ${d.wal ? 'and' : 'absent,'} member/snap/db ${d.db ? 'present' : 'absent'}`,
        };
      }),
  };
}

import { ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { compareVersion, previousMinor } from '../cluster/parse.js';
import type { Rule } from './types.js';

/** The patch release of the minor before `to` that the ladder's table asks before the first `to` start (3.5.32 before 3.6). */
export function floorOf(to: string): string | undefined {
  return ladderRow(to)?.floor?.version;
}

/**
 * The guide's "Update 3.X" as a rule of the hop into `to`, its floor read from the ladder's table:
 * every member on the floor or later before the first `to` start. Members below it are refused now,
 * or pass through a patch hop inside their minor first (planned by the ladder: the rule then checks
 * the release that patch hop brings); a later hop is judged by the release the hop before brings.
 */
export function floorRule(to: string): Rule {
  const row = ladderRow(to);
  const floor = row?.floor;
  if (!row?.guide || !floor) throw new Error(`the ladder's table has no patch floor for ${to}`);
  const from = previousMinor(to);
  return {
    id: `from-${floor.version}`,
    check: `every member runs ${floor.version} or later before the first ${to} start (the guide${floor.since ? ` since ${floor.since}` : ''}: ${floor.why})`,
    where: ["the member's API", 'binary'],
    severity: 'refuse',
    fix: `upgrade every member to the newest ${from} first: the ladder plans a patch hop inside ${from} with the ${from} binaries (--target-bin ${from}=DIR of ${floor.version} or later, or kv release get ${from}.N)`,
    guide: row.guide,
    test: (f) => {
      if (f.patchHopPlanned) {
        if (f.startsFrom && compareVersion(f.startsFrom, floor.version) < 0)
          return [{ result: 'problem', detail: `the patch hop inside ${from} would bring the members to ${f.startsFrom}, below ${floor.version}` }];
        return [{ result: 'ok', detail: `a patch hop inside ${from} to ${f.startsFrom ?? `the ${from} binaries`} is planned first` }];
      }
      if (!f.current) {
        if (!f.startsFrom) return [{ result: 'later', detail: 'checked on the members before the hop' }];
        return compareVersion(f.startsFrom, floor.version) < 0
          ? [{ result: 'problem', detail: `the members will run ${f.startsFrom} after the ${from} hop` }]
          : [{ result: 'ok', detail: `the members will run ${f.startsFrom}` }];
      }
      return f.members.map((m) => {
        if (!m.serverVersion) return { member: m.name, result: 'not-checked', detail: 'the member reported no version' };
        return compareVersion(m.serverVersion, floor.version) < 0
          ? { member: m.name, result: 'problem', detail: `runs ${m.serverVersion}` }
          : { member: m.name, result: 'ok', detail: `runs ${m.serverVersion}` };
      });
    },
  };
}

/**
 * The just-in-time check (issue kv-paths): between a member's stop and its start on the target, what that
 * start will read of the member's WAL is checked against the target, where opsctl reads the member's data
 * dir on this machine (MemberDriver.dataDirs). The plan's checks and fixes ran before the hop's first stop;
 * this is what was written since (a /health probe that began after them, served by a v2 API). 3.6 refuses to
 * replay a v2 request other than etcd's own membership PUTs after the newest snapshot ("detected disallowed v2
 * WAL"), and 3.7 panics on any v2 request written as such there ("unmarshal should never fail"). On a finding
 * nothing is started on the target: the member goes back on its own version and the run halts, saying why.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import { compareMinor, minor } from '../cluster/parse.js';
import { walV2Replay, type MemberDirs } from './v2-data.js';

/** What the check asks of the driver (MemberDriver's own members: kv/drivers imports this room, never the reverse). */
interface Reads {
  /** The members' program keeps no etcd data (ProgramCapabilities.etcdData false): nothing to read. */
  readonly capabilities?: { readonly etcdData: boolean };
  dataDirs?(m: MemberSpec): Promise<MemberDirs | undefined>;
}

/** Why the member's start on `target` would fail on its own data (etcd's words), or undefined: nothing found, or nothing read here. */
export async function notStartable(driver: Reads, m: MemberSpec, target: { version: string }): Promise<string | undefined> {
  const to = minor(target.version);
  if (!to || compareMinor(to, '3.6') < 0 || driver.capabilities?.etcdData === false) return undefined;
  const dirs = await driver.dataDirs?.(m);
  if (!dirs) return undefined;
  const r = walV2Replay(dirs);
  if ('why' in r) return undefined;
  const bad = to === '3.6' ? r.custom : r.count;
  if (!bad) return undefined;
  const methods = Object.entries(r.after)
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');
  const etcd = to === '3.6' ? 'refuses to replay ("detected disallowed v2 WAL")' : 'panics replaying ("unmarshal should never fail")';
  return (
    `${m.name}'s WAL holds ${bad} v2 request${bad === 1 ? '' : 's'} (${methods}) after its newest snapshot (raft index ${r.snapshotIndex}), which etcd ${to} ${etcd}: ` +
    `written since the plan's checks (a /health probe or a client of the v2 API); nothing was started on ${to}`
  );
}

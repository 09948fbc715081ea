/**
 * `etcdutl check v2store` (the 3.6 guide's check, etcdutl of 3.5.26 or later) on each member's data
 * dir before the 3.5 → 3.6 hop, and before the ladder's first stop too: here for the sandbox's members,
 * on each member's host through the driver's trial template for the command and systemd drivers (the
 * data dir the member runs with, read from its /proc by the trial; the etcdutl beside the 3.5 binary
 * there). It reads the WAL and the newest v2 snapshot and takes no lock: a live data dir is read.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ClusterSpec, MemberSpec } from '../cluster/cluster-file.js';
import { capabilitiesOf, placeOf, type MemberDirs, type MemberDriver } from '../drivers/driver.js';
import type { HopFacts, Setting } from '../rules/types.js';
import { shellWord } from '../drivers/host-script.js';
import type { TrialFinding } from '../trial/run.js';
import { walV2Replay } from '../wal/v2-data.js';

type Exec = typeof import('execa').execa;

/**
 * The directory of a minor's binaries as the run knows it: `--target-bin MINOR=DIR` (or the release cache),
 * else the directory of the binary the cluster file's `bins:` names on the hosts (its etcdutl sits beside it).
 */
export function binDirOf(given: string | undefined, driver: MemberDriver | undefined, minor: string): string | undefined {
  if (given) return given;
  const onHosts = driver?.hostBinary?.(minor);
  return onHosts ? dirname(onHosts) : undefined;
}

/** The first etcdutl beside the given binaries. */
export function etcdutlIn(dirs: Record<string, string | undefined>): string | undefined {
  return Object.values(dirs)
    .filter((d): d is string => Boolean(d))
    .map((d) => join(d, 'etcdutl'))
    .find((f) => existsSync(f));
}

/**
 * etcdutl's environment for the check: one core (GOMAXPROCS=1). It reads a live member's WAL beside that member
 * on its host, and a Go program takes every core by default: the member keeps the others. It is the faster too
 * where the cores are few: measured on 2 cores at 100 MB of v3 data, each check 0.33 s of CPU instead of 0.5 s,
 * and the three beside the leader's snapshot 1.13-1.33 s instead of 1.45-1.65 s.
 */
export const ETCDUTL_ENV = { GOMAXPROCS: '1' } as const;

export interface V2storeCheckOptions {
  cluster: ClusterSpec;
  driver?: MemberDriver;
  exec: Exec;
}

/** The check on every member at once; `why` where it cannot run. `trials`: the hop's trials, whose settings name each member's data dir. */
export async function checkV2store(
  o: V2storeCheckOptions,
  dirs: Record<string, string | undefined>,
  trials?: readonly TrialFinding[],
): Promise<HopFacts['v2store']> {
  const can = capabilitiesOf(o.driver);
  if (!can.etcdData) return { why: `${can.what} members keep no etcd data dir for etcdutl` };
  const place = placeOf(o.driver);
  if (o.driver && place.hostTemplates) return onHosts(o, o.driver, dirs.given, trials);
  if (!place.startsHere)
    return { why: "no driver reaches the members' data dirs: run etcdutl check v2store --data-dir DIR on each host (etcdutl of 3.5.26 or later)" };
  const etcdutl = etcdutlIn(dirs);
  if (!etcdutl) return { why: 'no etcdutl beside the 3.5 binaries (3.5.26 and later ship one with check v2store)' };
  const each = await Promise.all(o.cluster.members.map((m) => memberDirs(o.driver, m)));
  const unknown = o.cluster.members.find((_, i) => !each[i]);
  if (unknown) return { why: `member ${unknown.name}: its data dir is not known` };
  // Every member's data dir at once (and its own WAL dir: etcdutl reads DATA/member/wal otherwise, "no such
  // file or directory"). Measured: a live 3.5.35 data dir is read in ~20 ms; it takes no lock.
  const runs = await Promise.all(
    each.map((d) => o.exec(etcdutl, v2storeArgs(d!), { reject: false, timeout: 60_000, extendEnv: false, env: { PATH: '/usr/bin:/bin', ...ETCDUTL_ENV } })),
  );
  if (runs.some((r) => /unknown command/i.test(String(r.stderr)))) return { why: `${etcdutl} has no check v2store (etcdutl of 3.5.26 or later has)` };
  return runs.map((r, i) => {
    const said = `${String(r.stdout)} ${String(r.stderr)}`.trim().split('\n').pop() ?? '';
    return { member: o.cluster.members[i]!.name, ok: r.exitCode === 0, detail: `etcdutl check v2store: ${said || `exit ${r.exitCode}`}` };
  });
}

/** `etcdutl check v2store` on a member's data: its data dir, and its own WAL dir where it has one (3.5's etcdutl takes --wal-dir). */
export function v2storeArgs(d: MemberDirs): string[] {
  return ['check', 'v2store', '--data-dir', d.dataDir, ...(d.walDir ? ['--wal-dir', d.walDir] : [])];
}

/** A member's data dir and WAL dir as the driver reads them here (its settings), else the data dir the cluster gives. */
export async function memberDirs(driver: MemberDriver | undefined, m: MemberSpec): Promise<MemberDirs | undefined> {
  const read = await driver?.dataDirs?.(m);
  return read ?? (m.dataDir ? { dataDir: m.dataDir } : undefined);
}

/** A setting as etcd reads it: a config file's key when the member starts from one, else the flag, else the variable. */
function effective(list: readonly Setting[], key: string): string | undefined {
  const fromFile = list.some((s) => !s.flag);
  const hits = list.filter((s) => s.key === key && (fromFile ? !s.flag : true)).sort((a, b) => Number(Boolean(a.env)) - Number(Boolean(b.env)));
  const v = hits[0]?.value;
  return typeof v === 'string' && v ? v : undefined;
}

/** The check on each member's host (the trial template), with the etcdutl beside the 3.5 binary there and the data dir it runs with. */
async function onHosts(
  o: V2storeCheckOptions,
  driver: MemberDriver,
  binDir: string | undefined,
  trials: readonly TrialFinding[] | undefined,
): Promise<HopFacts['v2store']> {
  if (!driver.hostShell)
    return { why: "the driver has no trial template to run etcdutl on the members' hosts (driver.trial or --trial-cmd 'ssh {host} sudo sh -s')" };
  if (!binDir)
    return {
      why: 'the 3.5 binaries\' directory on the hosts is not known (--target-bin 3.5=DIR, or bins: {"3.5": PATH} in the cluster file\'s driver): its etcdutl checks the data dirs there',
    };
  const etcdutl = `${binDir}/etcdutl`;
  const out: Array<{ member: string; ok: boolean; detail: string }> = [];
  const why: string[] = [];
  await Promise.all(
    o.cluster.members.map(async (m) => {
      const list = trials?.find((t) => t.member === m.name)?.settings?.list;
      // (no trial ran: the dirs the driver knows, as the rehearsal's clone knows its members', else as the member runs on its host)
      const known = list ? undefined : ((await driver.dataDirs?.(m)) ?? (await driver.hostDataDirs?.(m)));
      const dataDir = list ? effective(list, 'data-dir') : known?.dataDir;
      if (!dataDir) return void why.push(`${m.name}: its data dir is not known (its trial read no --data-dir, ETCD_DATA_DIR or data-dir)`);
      const wal = list ? effective(list, 'wal-dir') : known?.walDir;
      const cmd = [
        ...Object.entries(ETCDUTL_ENV).map(([k, v]) => `${k}=${v}`),
        shellWord(etcdutl),
        'check',
        'v2store',
        '--data-dir',
        shellWord(dataDir),
        ...(wal ? ['--wal-dir', shellWord(wal)] : []),
      ].join(' ');
      const r = await driver.hostShell!(m, `${cmd} 2>&1\necho "opsctl-exit: $?"\n`, 60_000);
      const code = /^opsctl-exit: (\d+)$/m.exec(r.stdout)?.[1];
      if (r.failed || code === undefined) return void why.push(`${m.name}: ${r.failed ?? 'the check printed no exit status'}`);
      const said =
        r.stdout
          .replace(/^opsctl-exit: \d+$/m, '')
          .trim()
          .split('\n')
          .pop() ?? '';
      if (code === '127' || /unknown command|not found/i.test(said))
        return void why.push(`${m.name}: ${etcdutl} (3.5.26 or later) is not there or has no check v2store: ${said}`);
      out.push({ member: m.name, ok: code === '0', detail: `etcdutl check v2store on its host: ${said || `exit ${code}`}` });
    }),
  );
  if (why.length) return { why: why.join('; ') };
  return o.cluster.members.map((m) => out.find((x) => x.member === m.name)!);
}

/**
 * Before the first 3.7 start: each member's WAL read for the v2 requests 3.7 cannot replay (those after
 * its newest snapshot: src/kv/wal/v2-data.ts walV2Replay), where opsctl reaches the data dirs.
 */
export async function walReplayOf(o: Pick<V2storeCheckOptions, 'cluster' | 'driver'>): Promise<HopFacts['walReplay']> {
  const can = capabilitiesOf(o.driver);
  if (!can.etcdData) return { why: `${can.what} members keep no WAL` };
  if (!placeOf(o.driver).startsHere)
    return {
      why: "each member's WAL is on its host, not read from here: 3.7 panics replaying a v2 request written after the newest snapshot (every 3.5 start writes one); on each host a member/snap/*.snap written on 3.6 after the member's last start on 3.5 clears it (else restart it once on 3.6 with --snapshot-count=1)",
    };
  const out: Array<{ member: string; snapshotIndex: number; count: number; after: Record<string, number> }> = [];
  for (const m of o.cluster.members) {
    // (its own WAL dir where it sets one: the WAL is not in DATA/member/wal then)
    const dirs = await memberDirs(o.driver, m);
    const r = dirs ? walV2Replay(dirs) : { why: 'no data dir is known for it' };
    if ('why' in r) return { why: `${m.name}: ${r.why}` };
    out.push({ member: m.name, ...r });
  }
  return out;
}

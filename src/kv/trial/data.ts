/**
 * The data trial: beyond its settings (trial/run.ts), the hop's target must start on a copy of the
 * member's own data and answer with it, before any member stops. That catches data a version cannot
 * read (3.6 panics at start on custom v2 entries in the WAL: "detected disallowed v2 WAL for stage
 * --v2-deprecation=write-only"), which a snapshot restore alone would hide (it keeps neither the v2
 * store nor the WAL).
 *
 * API (the ladder calls it before the first stop, per member, like the settings trial):
 *   runDataTrials(jobs: TrialJob[], opts: DataTrialOptions): Promise<DataTrialFinding[]>
 *   runDataTrial(job: TrialJob, opts): Promise<DataTrialFinding>   (one hop: a chain of one)
 * - jobs: ONE member's hops still to do, in ladder order ({ hop, member, target { version, binDir }, release },
 *   as runTrials takes them). One copy of its data; each hop's target starts on it in turn, on the data
 *   the one before wrote (3.6 meets the data 3.5 left, as the ladder will); a finding per job, in order.
 *   After a hop that did not get through, the later ones are 'not-checked' ("not tried: …").
 * - opts: the driver (its startSettings and hostShell), timeoutS per target, copyTimeoutS for the
 *   snapshot (300), credentials where auth is on (a variable of the script on its standard input: never
 *   printed, never an argument), tls paths on the member's host (default its own), scratch (/var/tmp),
 *   debug.
 * - A finding: 'ok' — the target started on the copy and its KV hash at the copy's revision R equals
 *   the live member's at R (a 3.2 member has no HashKV: the copy served a read at R, at least the
 *   member's revision before the copy, said so); 'problem' — the target exited on the copy (in its own
 *   words) or its hash differs; 'not-checked' — why, and the one thing that makes it run. `data` holds
 *   the figures (hashes, revision, the copy's size, each phase's ms). `moot: true` marks a member whose
 *   program keeps no etcd data to start on, as its driver answers (ProgramCapabilities.etcdData: the sandbox's
 *   simulated members): not-checked, never a pass; the lead decides how to show it.
 *
 * How (trial/data-script.ts): on the member's host, a consistent copy without stopping it (.snap files,
 * then `etcdctl snapshot save` from its own client URL, then the WAL), the target started on it with the
 * member's settings (trial/rewrite.ts, --force-new-cluster: alone, it can serve) in a network namespace of
 * its own (the copy holds the member's ID and its peers' URLs), then both hashes; everything removed after.
 */
import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute } from 'node:path';
import { capabilitiesOf, placeOf, type MemberDriver, type SettingsReads } from '../drivers/driver.js';
import type { StartSettings } from '../drivers/start-settings.js';
import { NoTrial, parseConfigDoc, trialIsContained, trialPlan, type ConfigDoc, type TrialPlan } from './rewrite.js';
import { fingerprint, type TrialJob } from './run.js';
import { dataScript, type DataScriptInput } from './data-script.js';
import { memberDirs, memberTls, parseData } from './data-read.js';
import { judge, type DataTrialFinding } from './data-judge.js';

export type { DataTrialFinding } from './data-judge.js';

export interface DataTrialOptions {
  driver?: MemberDriver;
  /** Seconds each target may take to answer on the copy. */
  timeoutS: number;
  /** Seconds the snapshot may take (default 300). */
  copyTimeoutS?: number;
  /** The member's user and password where auth is on: a variable of the script, never printed, never an argument. */
  credentials?: { user: string; password: string };
  /** CA, cert and key paths ON THE MEMBER'S HOST (default: its own trusted-ca-file; its own cert and key where it asks clients for one). */
  tls?: { cacert?: string; cert?: string; key?: string };
  /** Where the copy goes on the member's host (default /var/tmp: on disk, unlike a tmpfs /tmp). */
  scratch?: string;
  /** The round's settings reads (trial/run.ts's too): the member's process is read once for all its hops. */
  reads?: SettingsReads;
  debug?: (line: string) => void;
}

/** The targets' ports inside the copy's own namespace: nothing else listens there. */
const NS_PORTS = { client: 2379, peer: 2380, metrics: 2381, clientHttp: 2382 };

/** One hop's data trial (a chain of one: runDataTrials). */
export async function runDataTrial(job: TrialJob, o: DataTrialOptions): Promise<DataTrialFinding> {
  return (await runDataTrials([job], o))[0]!;
}

/**
 * One member's data trials along the ladder: `jobs` are its hops in order (the same member). One copy of
 * its data; each hop's target started on it in turn, each on the data the one before wrote (as the ladder
 * will); a finding per job, in order. After a hop whose target did not get through, the later ones are
 * not checked (never tried on data the ladder would never reach).
 */
export async function runDataTrials(jobs: TrialJob[], o: DataTrialOptions): Promise<DataTrialFinding[]> {
  const t0 = Date.now();
  const first = jobs[0];
  if (!first) return [];
  if (jobs.some((j) => j.member.name !== first.member.name)) throw new Error('runDataTrials: one member per call');
  const member = first.member.name;
  const all = (detail: string, extra: Partial<DataTrialFinding> = {}): DataTrialFinding[] =>
    jobs.map((j) => ({ member, hop: j.hop, result: 'not-checked', detail: `data trial not run: ${detail}`, ...extra }));
  const moot = (what: string) =>
    jobs.map((j) => ({
      ...all('')[0]!,
      hop: j.hop,
      moot: true as const,
      detail:
        `data trial not run: ${member} is a ${what} member: it keeps no etcd data (no db, WAL or snap files) for etcd ${releaseOf(j)} to start on; ` +
        'its settings trial still runs (a sandbox with real members: kv sandbox up --etcd-bin DIR)',
    }));
  const d = o.driver;
  if (!capabilitiesOf(d).etcdData) return moot(capabilitiesOf(d).what);
  if (!d) return all('no driver: opsctl does not reach the members (give a cluster file with a driver, or the sandbox)');
  if (d.proveStarts) {
    // (the driver proves the chain its own way: containers, the hop's image on a copy of the member's data volume)
    const proofs = await d.proveStarts(
      first.member,
      jobs.map((j) => j.target),
      o.timeoutS,
    );
    return jobs.map((j, n) => {
      const p = proofs[n] ?? { result: 'not-checked' as const, detail: 'no proof ran' };
      return {
        member,
        hop: j.hop,
        result: p.result,
        detail: p.detail,
        ...(p.ms !== undefined ? { ms: p.ms } : {}),
        ...(p.result === 'ok' && p.ms !== undefined ? { started: { ms: p.ms, ...(p.version ? { version: p.version } : {}) } } : {}),
      };
    });
  }
  if (!d.startSettings || !d.hostShell)
    return all("the driver cannot run a script on the member's host (give it a trial template: driver.trial or --trial-cmd 'ssh {host} sudo sh -s')");
  // Each hop's start (its program); the chain stops before a hop whose settings cannot be read. One read of
  // the member's process on its host serves every hop (o.reads), and the settings trials of the same round.
  const settings: StartSettings[] = [];
  let unread: string | undefined;
  for (const j of jobs) {
    const s = await d.startSettings(j.member, j.target, o.reads).catch((err: Error) => ({ why: `reading its settings failed: ${err.message}` }));
    if ('why' in s) {
      unread = s.why;
      break;
    }
    // (a program of the driver's own, found running or started by it: the driver says it keeps no etcd data)
    if (!capabilitiesOf(s).etcdData) return moot(capabilitiesOf(s).what);
    // the target's program is not known on the host (as the settings trial says): nothing to start on the copy
    if (s.noProgram) {
      unread = s.noProgram;
      break;
    }
    settings.push(s);
  }
  const s = settings[0];
  if (!s) return all(unread!);
  const cwd = s.cwd ?? (placeOf(d).startsHere ? process.cwd() : undefined);
  let doc: ConfigDoc | undefined;
  try {
    doc = s.config ? await parseConfigDoc(s.config.text, s.config.file) : undefined;
  } catch (err) {
    if (!(err instanceof NoTrial)) throw err;
    return all(`${err.message} (the settings trial says what etcd makes of it)`);
  }
  const dirs = memberDirs(s, doc, cwd);
  if ('why' in dirs) return all(dirs.why);
  let found: DataTrialFinding[] = [];
  // A second copy where the first could not be judged for a passing reason (a compaction between the hashes).
  for (let attempt = 1; attempt <= 2; attempt++) {
    const dir = `${o.scratch ?? '/var/tmp'}/opsctl-data-trial-${randomBytes(6).toString('hex')}`;
    const steps: DataScriptInput['steps'] = [];
    for (const [n, st] of settings.entries()) {
      const fresh = st.config ? await parseConfigDoc(st.config.text, st.config.file) : undefined;
      let plan: TrialPlan;
      try {
        plan = trialPlan(st, dir, NS_PORTS, fresh, { dataCopy: true });
      } catch (err) {
        if (err instanceof NoTrial) return all(`${err.message}; a trial never runs on the member's own data`);
        throw err;
      }
      const leak = trialIsContained(plan, fresh);
      if (leak) return all(`the settings could not be rewritten safely (${leak}); a trial never runs on the member's own data or ports`);
      // (the binary asked its version on the host as the settings trial asks it: its start can stand for that trial's)
      steps.push({ plan, askVersion: placeOf(d).hostTemplates || !jobs[n]!.release });
    }
    const script = dataScript({
      dir,
      steps,
      source: dirs,
      endpoint: first.member.endpoint,
      etcdctl: etcdctls(jobs, settings),
      ...tlsArgs(first.member.endpoint, steps[0]!.plan.clientUrl, memberTls(s, doc, cwd), o.tls),
      ...(o.credentials ? { credentials: o.credentials } : {}),
      ...(s.user ? { user: s.user } : {}),
      timeoutS: o.timeoutS,
      copyTimeoutS: o.copyTimeoutS ?? 300,
      delimiter: `end_of_data_trial_${randomBytes(8).toString('hex')}`,
    });
    o.debug?.(`[kv] data trial of ${member} (${jobs.map((j) => j.hop).join(', ')}): a copy of ${dirs.dataDir} in ${dir}; ${steps[0]!.plan.notes.join('; ')}`);
    const wait = (o.copyTimeoutS ?? 300) + (o.timeoutS + 60) * steps.length + 60;
    const r = await d.hostShell(first.member, script, wait * 1000).catch((err: Error) => ({ stdout: '', stderr: err.message, failed: err.message }));
    if (r.failed && !r.stdout) return all(`the script could not run on the member's host: ${r.failed}`);
    const out = parseData(r.stdout);
    o.debug?.(`[kv] data trial of ${member}: ${out.kind}${'reason' in out ? ` ${out.reason}` : ''} ${JSON.stringify(out.phases)}`);
    // (each step's own times: its start until it answered, its hash, its stop)
    if (out.kind === 'ran')
      o.debug?.(
        `[kv] data trial of ${member}: steps (ms) ${out.steps.map((x) => (x.kind === 'answered' ? `${x.ms}/${x.hashMs ?? '-'}/${x.stopMs ?? '-'}` : x.kind)).join(' ')}`,
      );
    const judged = await judge(jobs, settings, out, unread);
    // (each hop's settings, as read: a settings trial of the same settings may stand on this start, trial/run.ts)
    const prints = settings.map(fingerprint);
    found = judged.findings.map((f, n) => ({ member, ...f, ms: Date.now() - t0, ...(prints[n] ? { fingerprint: prints[n] } : {}) }));
    if (!judged.again) return found;
  }
  return found.map((f) => (f.result === 'not-checked' ? { ...f, detail: `${f.detail} (twice)` } : f));
}

/** etcdctl beside each target (its binary dir, else its program's dir), the newest hop's first. */
function etcdctls(jobs: TrialJob[], settings: StartSettings[]): string[] {
  const dirs = settings.map((s, n) => jobs[n]!.target.binDir ?? (s.program.length === 1 && isAbsolute(s.program[0]!) ? dirname(s.program[0]!) : undefined));
  return [...new Set(dirs.filter((d): d is string => Boolean(d)).map((d) => `${d}/etcdctl`))].reverse();
}

function releaseOf(j: TrialJob, asked?: string): string {
  return asked ?? j.release ?? j.target.version;
}

/** etcdctl's TLS flags: for the live member (its CA, else no verification of its own host's port) and for the copy. */
function tlsArgs(
  endpoint: string,
  copyUrl: string,
  own: ReturnType<typeof memberTls>,
  given: DataTrialOptions['tls'],
): { liveTls: string[]; copyTls: string[] } {
  const cert = given?.cert ?? (own.certAuth ? own.cert : undefined);
  const key = given?.key ?? (own.certAuth ? own.key : undefined);
  const certArgs = cert && key ? ['--cert', cert, '--key', key] : [];
  const ca = given?.cacert ?? own.ca;
  return {
    liveTls: /^https:/i.test(endpoint) ? [...(ca ? ['--cacert', ca] : ['--insecure-skip-tls-verify']), ...certArgs] : [],
    // (the copy listens on 127.0.0.1 in a namespace of its own: no name of its certificate, and nothing else to answer)
    copyTls: /^https:/i.test(copyUrl) ? ['--insecure-skip-tls-verify', ...certArgs] : [],
  };
}

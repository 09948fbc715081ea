/**
 * The target binary as the judge of each member's settings: before the first stop of a hop, the
 * hop's etcd is started once per member with that member's own settings (trial/settings.ts), only
 * its dirs, URLs and initial cluster rewritten (trial/rewrite.ts), on the member's own host (the
 * driver's hostShell: `sh -s` here, the trial template there). It passes when the trial member
 * serves /health; it fails when the binary exits, in the binary's own words, with the settings they
 * name (trial/verdict.ts). Where no trial can run, the finding says why ("not checked").
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { PORT_CLASH_ATTEMPTS } from '../../core/retry.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { capabilitiesOf, placeOf, type MemberDriver, type MemberTarget, type SettingsReads } from '../drivers/driver.js';
import type { Finding, Setting } from '../rules/types.js';
import { NoTrial, parseConfigDoc, timingIsDefault, trialIsContained, trialPlan, type ConfigDoc, type TrialPorts } from './rewrite.js';
import { parseRun, runScript, type TrialOutcome } from './script.js';
import { settingList } from './settings.js';
import { flagWords, type StartSettings } from '../drivers/start-settings.js';
import { blamed, describeSetting, exitMessage } from './verdict.js';

export interface TrialOptions {
  driver?: MemberDriver;
  /** Seconds a trial member may take to serve /health (or exit). */
  timeoutS: number;
  /** Trials at once (each a short etcd start: a host's CPU and its /tmp hold a few at a time). */
  parallel?: number;
  /** Earlier findings by `hop\0member`: one whose settings are unchanged (same fingerprint) stands, no new trial. */
  prior?: Map<string, TrialFinding>;
  /** The round's settings reads (each member's process read once for every hop's trial, and for its data trials). */
  reads?: SettingsReads;
  /**
   * The same member's data trial of the same hop (trial/data.ts), where one runs in this round: where it
   * started the same binary with the same settings (the same fingerprint) and the member's election timing
   * is etcd's own, that start stands for this trial's (see trialOf).
   */
  dataStart?: (job: TrialJob) => Promise<DataStart | undefined>;
  debug?: (line: string) => void;
}

/** One trial to run: a member on a hop's target. */
export interface TrialJob {
  hop: string;
  member: MemberSpec;
  target: MemberTarget;
  /** The binary's version, for the finding ("etcd 3.4.23 …"). */
  release?: string;
  /**
   * The member runs the hop's target already ("etcd 3.6.16"): the hop never stops it, and its process is
   * the proof a trial would give. Its settings are read (the rules read them), no trial starts.
   */
  onTarget?: string;
}

/** What a data trial's finding tells of its start (trial/data-judge.ts). */
export interface DataStart {
  started?: { ms: number; version?: string };
  fingerprint?: string;
}

/** A trial's finding, as the rule shows it; `fingerprint` names the settings it judged (a later look compares). */
export interface TrialFinding extends Finding {
  member: string;
  hop: string;
  ms?: number;
  fingerprint?: string;
  /** The settings it judged, as the rules read them (the hop's other rules check the same list). */
  settings?: { source: string; list: Setting[]; config?: { file: string; text: string } };
  /** 'data': proven by the member's data trial's start of the same binary with the same settings (no start of its own). */
  via?: 'data';
  /** When the trial that found it ran (ISO): a finding that stands for a later look (the same settings) keeps its own time. */
  at?: string;
  /** No trial ran now: 'journal', a verdict the run this one resumes recorded (ladder/proofs.ts); 'on-target', the member runs the hop's target already. */
  kept?: 'journal' | 'on-target' | 'rehearsal';
}

/** Every job at once, at most `parallel` running: the findings in the jobs' order. */
export async function runTrials(jobs: TrialJob[], o: TrialOptions): Promise<TrialFinding[]> {
  const out: TrialFinding[] = new Array<TrialFinding>(jobs.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= jobs.length) return;
      out[i] = await trialOf(jobs[i]!, o);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs.length, o.parallel ?? 4) }, worker));
  return out;
}

/** The settings' fingerprint: a later look at the same member runs no new trial when it is unchanged. */
export function fingerprint(s: StartSettings): string {
  return JSON.stringify([s.program, s.args, Object.entries(s.env).sort(), s.config?.text ?? null, s.cwd ?? null]);
}

/** A fingerprint as a record on disk keeps it: its SHA-256 (the settings themselves, an environment's secrets included, are never written). */
export function fingerprintDigest(fp: string): string {
  return fp.startsWith('sha256:') ? fp : `sha256:${createHash('sha256').update(fp).digest('hex')}`;
}

async function trialOf(job: TrialJob, o: TrialOptions): Promise<TrialFinding> {
  const base = { member: job.member.name, hop: job.hop };
  const notChecked = (detail: string): TrialFinding => ({ ...base, result: 'not-checked', detail });
  const d = o.driver;
  if (!d) return notChecked('no driver: opsctl does not reach the members (give a cluster file with a driver, or the sandbox)');
  if (!d.startSettings || (!d.hostShell && !d.proveStarts))
    return notChecked("the driver cannot run a trial on the member's host (give it a trial template: driver.trial or --trial-cmd 'ssh {host} sudo sh -s')");
  let s: StartSettings | { why: string };
  try {
    s = await d.startSettings(job.member, job.target, o.reads);
  } catch (err) {
    s = { why: `reading its settings failed: ${(err as Error).message}` };
  }
  if ('why' in s) return notChecked(s.why);
  const what = describeSources(s);
  const fp = fingerprint(s);
  const prior = o.prior?.get(`${job.hop}\0${job.member.name}`);
  // (a journal keeps the fingerprint's digest, and not the settings it judged: the rules read them as read now, the same)
  const known = prior && (prior.fingerprint === fp || prior.fingerprint === fingerprintDigest(fp)) ? prior : undefined;
  if (known?.settings) return { ...known, hop: job.hop };
  const list = await settingList(s);
  const settings = { source: what, list, ...(s.config ? { config: s.config } : {}) };
  if (known) return { ...known, hop: job.hop, fingerprint: fp, settings };
  if (job.onTarget)
    return {
      ...base,
      result: 'ok',
      detail: `runs ${job.onTarget} already, the hop's target, with these settings (${what}): the hop does not stop it, no trial start`,
      kept: 'on-target',
      fingerprint: fp,
      settings,
    };
  if (s.noProgram) return { ...notChecked(s.noProgram), fingerprint: fp, settings };
  if (d.proveStarts) return { ...base, ...(await byDriver(job, o, d.proveStarts.bind(d))), fingerprint: fp, settings };
  if (!d.hostShell) return notChecked("the driver cannot run a trial on the member's host");
  // The binary is on the member's host: there it is asked its version (the trial proves it is there, and of the hop).
  // (the driver's own program, not etcd: no binary on the host to ask, no etcd data to try it on)
  const can = capabilitiesOf(s);
  const host = {
    shell: d.hostShell.bind(d),
    remote: placeOf(d).hostTemplates && !d.runsHere?.(job.member),
    onHost: placeOf(d).hostTemplates && can.askVersion,
    askVersion: can.askVersion,
  };
  const proven = can.etcdData ? await byDataTrial(job, o, s, fp, what, { onHost: host.onHost }) : undefined;
  if (proven) return { ...base, ...proven, fingerprint: fp, settings };
  const found = await tryIt(job, o, host, s, what, list);
  return { ...found, fingerprint: fp, settings };
}

/**
 * The data trial's start in place of a start of this trial's own, where it proves strictly more: the same
 * binary with the same settings (the same fingerprint: one read of the member's process serves both), the
 * same rewrites (dirs, URLs, initial cluster, discovery), and the member's election timing etcd's own (the
 * data trial sets a fast one: over a member's own, its start would not judge that), started on a copy of
 * the member's data — the start the hop itself makes. The settings trial's start on an empty data dir
 * proves only a new member's bootstrap besides, which no hop makes. Where the data trial did not get
 * through its start (not run, refused, exited, not tried), this trial starts on its own and names the cause.
 */
async function byDataTrial(
  job: TrialJob,
  o: TrialOptions,
  s: StartSettings,
  fp: string,
  what: string,
  { onHost }: { onHost: boolean },
): Promise<Omit<TrialFinding, 'member' | 'hop'> | undefined> {
  if (!o.dataStart || s.noProgram) return undefined;
  let doc: ConfigDoc | undefined;
  try {
    doc = s.config ? await parseConfigDoc(s.config.text, s.config.file) : undefined;
  } catch (err) {
    if (err instanceof NoTrial) return undefined;
    throw err;
  }
  if (!timingIsDefault(s, doc)) return undefined;
  const data = await o.dataStart(job);
  if (!data?.started || data.fingerprint !== fp) return undefined;
  // (the binary was asked its version on the member's host as this trial would ask it)
  const wrong = onHost || !job.release ? wrongBinary(s.program, data.started.version, job) : undefined;
  if (wrong) return { result: 'problem', detail: wrong };
  const release = data.started.version ?? job.release ?? job.target.version;
  return {
    result: 'ok',
    ms: data.started.ms,
    via: 'data',
    detail: `etcd ${release} started with its settings (${what}) in ${data.started.ms} ms: its data trial's start, on a copy of its data (the same binary and settings; no second start on an empty data dir)`,
  };
}

/**
 * A driver that proves a start its own way (containers: the hop's image with the member's settings on a copy
 * of its data): the data trial's start of the same round where it got through (the same start), else one of its own.
 */
async function byDriver(job: TrialJob, o: TrialOptions, prove: NonNullable<MemberDriver['proveStarts']>): Promise<Omit<TrialFinding, 'member' | 'hop'>> {
  const data = await o.dataStart?.(job);
  if (data?.started) {
    const release = data.started.version ?? job.release ?? job.target.version;
    return {
      result: 'ok',
      ms: data.started.ms,
      via: 'data',
      detail: `etcd ${release} started with its settings in ${data.started.ms} ms: its data trial's start (the same start)`,
    };
  }
  // (the data trial's start did not get through: the settings alone, on an empty data dir, as every settings trial)
  const [found] = await prove(job.member, [job.target], o.timeoutS, 'empty');
  return found
    ? { result: found.result, detail: found.detail, ...(found.ms !== undefined ? { ms: found.ms } : {}) }
    : { result: 'not-checked', detail: 'no proof ran' };
}

/** The trial itself (the settings read): rewritten, run on the host, judged. */
async function tryIt(
  job: TrialJob,
  o: TrialOptions,
  host: { shell: NonNullable<MemberDriver['hostShell']>; remote: boolean; onHost: boolean; askVersion: boolean },
  s: StartSettings,
  what: string,
  list: Setting[],
): Promise<TrialFinding> {
  const base = { member: job.member.name, hop: job.hop };
  const notChecked = (detail: string): TrialFinding => ({ ...base, result: 'not-checked', detail });
  let doc: ConfigDoc | undefined;
  try {
    if (s.config) doc = await parseConfigDoc(s.config.text, s.config.file);
  } catch (err) {
    if (!(err instanceof NoTrial)) throw err;
    // etcd reads the file with a YAML parser too: a file that is not YAML stops it at start.
    return { ...base, result: 'problem', detail: `${err.message}: etcd ${job.release ?? job.target.version} would refuse to start on it` };
  }
  const remote = host.remote;
  const release = job.release ?? job.target.version;
  for (let attempt = 1; ; attempt++) {
    const dir = `${remote ? '/tmp' : tmpdir()}/opsctl-trial-${randomBytes(6).toString('hex')}`;
    let plan;
    // A fresh parse each attempt: the rewrite edits the document, and the check below reads the edited one.
    const edited = s.config ? await parseConfigDoc(s.config.text, s.config.file) : undefined;
    try {
      plan = trialPlan(s, dir, remote ? randomPorts() : await freePorts(), edited);
    } catch (err) {
      if (err instanceof NoTrial) return notChecked(`${err.message}; the trial never runs on a member's own data`);
      throw err;
    }
    const leak = trialIsContained(plan, edited);
    if (leak) return notChecked(`the settings could not be rewritten safely (${leak}); the trial never runs on a member's own data or ports`);
    const script = runScript(plan, {
      timeoutS: o.timeoutS,
      delimiter: `end_of_trial_config_${randomBytes(8).toString('hex')}`,
      user: s.user,
      clientCert: clientCertOf(s, doc),
      askVersion: host.askVersion && (host.onHost || !job.release),
    });
    o.debug?.(`[kv] trial of ${job.member.name} on ${release} (${job.hop}): ${plan.notes.join('; ')}`);
    const r = await host.shell(job.member, script, (o.timeoutS + 30) * 1000).catch((err: Error) => ({ stdout: '', stderr: err.message, failed: err.message }));
    if (r.failed && !r.stdout) return notChecked(`the trial could not run on the member's host: ${r.failed}`);
    const outcome = parseRun(r.stdout);
    if (outcome.kind === 'exited' && /address already in use/i.test(outcome.log) && attempt < PORT_CLASH_ATTEMPTS) continue;
    const wrong = host.askVersion && (host.onHost || !job.release) ? wrongBinary(plan.program, outcome.version, job) : undefined;
    if (wrong) return { ...base, result: 'problem', detail: wrong };
    return { ...base, ...judged(outcome, outcome.version ?? release, list, what, plan.notes) };
  }
}

function judged(
  outcome: TrialOutcome,
  release: string,
  settings: Awaited<ReturnType<typeof settingList>>,
  what: string,
  notes: string[],
): Omit<TrialFinding, 'member' | 'hop'> {
  switch (outcome.kind) {
    case 'ready':
      return { result: 'ok', ms: outcome.ms, detail: `etcd ${release} ${outcome.how} in ${outcome.ms} ms with its settings (${what}; ${notes.join('; ')})` };
    case 'exited': {
      const said = exitMessage(outcome.log);
      const named = blamed(said, settings);
      const setting = named.length ? `; the setting${named.length > 1 ? 's' : ''}: ${named.map(describeSetting).join(', ')}` : `; its settings: ${what}`;
      return {
        result: 'problem',
        ms: outcome.ms,
        detail: `etcd ${release} exited (${outcome.code}) in ${outcome.ms} ms: "${said || 'it printed nothing'}"${setting}`,
      };
    }
    case 'timeout':
      return {
        result: 'not-checked',
        ms: outcome.ms,
        detail: `etcd ${release} neither served /health nor exited within ${Math.round(outcome.ms / 1000)} s${outcome.last ? ` (last: ${outcome.last})` : ''}${exitMessage(outcome.log) ? `; its log: "${exitMessage(outcome.log)}"` : ''}`,
      };
    case 'error':
      return { result: 'not-checked', detail: `the trial script failed: ${outcome.message}` };
  }
}

/**
 * Where the binary was asked its version on the member's host: a binary that is not there, prints no
 * version, or is of another minor (or another release than the hop's) is the finding, whatever its start did.
 */
function wrongBinary(program: string[], version: string | undefined, job: TrialJob): string | undefined {
  const bin = program.join(' ');
  const want = job.target.version;
  if (!version)
    return `${bin} on the member's host printed no etcd version: no etcd ${want} binary there (give the path of one: --target-bin ${minorOf(want)}=DIR)`;
  if (minorOf(version) !== minorOf(want))
    return `${bin} on the member's host is etcd ${version}, not ${minorOf(want)}.x: the hop to ${minorOf(want)} needs a ${minorOf(want)} binary there (--target-bin ${minorOf(want)}=DIR)`;
  if (job.release && version !== job.release)
    return `${bin} on the member's host is etcd ${version}, not ${job.release} as the hop's binary here says: every host must run the same release (stage it there, or give that release: --target-bin ${minorOf(want)}=DIR)`;
  return undefined;
}

const minorOf = (v: string) => /^(\d+\.\d+)/.exec(v)?.[1] ?? v;

/** "config file /etc/etcd.yml; 4 flags; 2 ETCD_* variables (pid 1234 on h1)". */
function describeSources(s: StartSettings): string {
  const flags = flagWords(s.args).length;
  const vars = Object.keys(s.env).filter((k) => k.startsWith('ETCD_')).length;
  const parts = [
    ...(s.config ? [`config file ${s.config.file}`] : []),
    `${flags} flag${flags === 1 ? '' : 's'} (${s.from.args})`,
    `${vars} ETCD_* variable${vars === 1 ? '' : 's'}${vars ? ` (${s.from.env})` : ''}`,
  ];
  return parts.join(', ');
}

/** The member's own certificate and key when it asks its clients for one (the trial's /health is such a client). */
function clientCertOf(s: StartSettings, doc: ConfigDoc | undefined): { cert: string; key: string } | undefined {
  const get = (key: string): unknown => {
    if (doc) {
      const nested = doc.get('client-transport-security') as Record<string, unknown> | undefined;
      return doc.get(key) ?? nested?.[key];
    }
    const f = flagWords(s.args).find((x) => x.key === key);
    return f ? f.value : s.env[`ETCD_${key.toUpperCase().replace(/-/g, '_')}`];
  };
  const on = get('client-cert-auth');
  if (!(on === true || String(on) === 'true')) return undefined;
  const cert = get('cert-file');
  const key = get('key-file');
  return typeof cert === 'string' && typeof key === 'string' && cert && key ? { cert, key } : undefined;
}

/** Four free loopback ports on this machine (each bound once by the kernel's choice, then freed). */
async function freePorts(): Promise<TrialPorts> {
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const a = srv.address();
        srv.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
      });
    });
  const [client, peer, metrics, clientHttp] = await Promise.all([one(), one(), one(), one()]);
  return { client: client, peer: peer, metrics: metrics, clientHttp: clientHttp };
}

/** Four ports on another host, where the kernel cannot be asked: random, above the usual services (a taken one is tried again). */
function randomPorts(): TrialPorts {
  const base = 20_000 + (randomBytes(2).readUInt16BE() % 40_000);
  return { client: base, peer: base + 1, metrics: base + 2, clientHttp: base + 3 };
}

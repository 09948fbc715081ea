/**
 * A data trial's verdict per hop (trial/data.ts runs it): what each target did on the copy of the member's
 * data, judged in etcd's own words (trial/verdict.ts) and by the KV hash against the live member's.
 */
import { formatSize } from '@opsctl/shared/size.js';
import type { StartSettings } from '../drivers/start-settings.js';
import type { TrialFinding, TrialJob } from './run.js';
import type { CopyFacts, DataOutcome, HashRead, StepOutcome } from './data-read.js';
import { settingList } from './settings.js';
import { NOT_HASHED } from './data-script.js';
import { blamed, exitMessage } from './verdict.js';

export interface DataTrialFinding extends TrialFinding {
  /** The member's program keeps no etcd data to try (its driver's answer: the sandbox without --etcd-bin). */
  moot?: true;
  /** The target got through its start on the copy and answered (whatever its hash said): how fast, and its version where it was asked. */
  started?: { ms: number; version?: string };
  data?: {
    /** The revision both hashes are taken at (the copy's, when the first target answered). */
    revision?: string;
    hash?: string;
    liveHash?: string;
    /** The live member's revision before the copy. */
    liveRevision?: string;
    isolation?: string;
    copied?: CopyFacts;
    /** ms: the snapshot and the copy (once per member, shared by its hops), this hop's start, hashes and stop. */
    phases: { snapshot?: number; copy?: number; start?: number; hash?: number; stop?: number };
  };
}

type Verdict = Omit<DataTrialFinding, 'member'>;

/** The one thing that makes a refused trial run, by the script's reason word (the other refusals say it themselves). */
const FIX: Record<string, string> = {
  etcdctl: 'put etcdctl beside etcd in the target binaries (--target-bin VERSION=DIR) or install it on the host (etcd-client)',
  space: 'free space there',
  live: "the member's credentials (auth) or client certificate (TLS) let the trial ask it",
  snapshot: 'try again; the member must serve its snapshot to a client of its own host',
  busy: 'try again when writes are lighter',
};

const releaseOf = (j: TrialJob, s?: StepOutcome) => s?.version ?? j.release ?? j.target.version;

/** Every job's verdict; `again` where the run could not be judged for a passing reason (a compaction meanwhile). */
export async function judge(
  jobs: TrialJob[],
  settings: StartSettings[],
  out: DataOutcome,
  unread: string | undefined,
): Promise<{ findings: Verdict[]; again: boolean }> {
  const who = jobs[0]!.member.name;
  const notRun = (j: TrialJob, detail: string): Verdict => ({ hop: j.hop, result: 'not-checked', detail: `data trial not run: ${detail}` });
  if (out.kind === 'refused') {
    const fix = FIX[out.reason];
    return { findings: jobs.map((j) => notRun(j, `${out.detail}${fix ? `: ${fix}` : ''}`)), again: false };
  }
  if (out.kind === 'error') return { findings: jobs.map((j) => notRun(j, out.message)), again: false };
  const findings: Verdict[] = [];
  let again = false;
  let stopped: string | undefined;
  for (const [n, j] of jobs.entries()) {
    const step = out.steps[n];
    if (stopped) {
      findings.push(notRun(j, `not tried: ${stopped}`));
      continue;
    }
    if (n >= settings.length) {
      findings.push(notRun(j, unread ?? 'its settings could not be read'));
      stopped = `the hop ${j.hop} could not be tried`;
      continue;
    }
    if (!step) {
      findings.push(notRun(j, `the script ended before etcd ${releaseOf(j)} was started on the copy`));
      stopped = `the trial of ${j.hop} did not finish`;
      continue;
    }
    const on = `${copyOf(who, out)}${n > 0 ? `, after etcd ${releaseOf(jobs[n - 1]!, out.steps[n - 1])} of ${jobs[n - 1]!.hop} ran on it` : ''}`;
    const v = await stepVerdict(j, step, settings[n]!, out, on);
    const started = step.kind === 'answered' ? { started: { ms: step.ms, ...(step.version ? { version: step.version } : {}) } } : {};
    findings.push({ ...v.finding, hop: j.hop, data: facts(out, step), ...started });
    again ||= v.again;
    if (v.finding.result !== 'ok') stopped = `etcd ${releaseOf(j, step)} of ${j.hop} did not get through on the copy`;
  }
  return { findings, again };
}

function facts(out: Extract<DataOutcome, { kind: 'ran' }>, step: StepOutcome): NonNullable<DataTrialFinding['data']> {
  const answered = step.kind === 'answered' ? step : undefined;
  const first = out.steps[0];
  const revision = first?.kind === 'answered' ? first.revision : undefined;
  return {
    phases: {
      ...out.phases,
      start: step.ms,
      ...(answered?.hashMs !== undefined ? { hash: answered.hashMs + (out.phases.liveHash ?? 0) } : {}),
      ...(answered?.stopMs !== undefined ? { stop: answered.stopMs } : {}),
    },
    ...(revision ? { revision } : {}),
    ...(answered && 'hash' in answered.copy ? { hash: answered.copy.hash } : {}),
    ...(out.live && 'hash' in out.live ? { liveHash: out.live.hash } : {}),
    ...(out.liveRevision ? { liveRevision: out.liveRevision } : {}),
    ...(out.isolation ? { isolation: out.isolation } : {}),
    ...(out.copied ? { copied: out.copied } : {}),
  };
}

async function stepVerdict(
  j: TrialJob,
  step: StepOutcome,
  s: StartSettings,
  out: Extract<DataOutcome, { kind: 'ran' }>,
  on: string,
): Promise<{ finding: Omit<Verdict, 'hop'>; again: boolean }> {
  const release = releaseOf(j, step);
  const who = j.member.name;
  switch (step.kind) {
    case 'timeout': {
      const said = exitMessage(step.log);
      const last = `${step.last ? ` (last: ${step.last})` : ''}${said ? `; its log: "${said}"` : ''}`;
      const detail = `data trial not finished: etcd ${release} neither answered nor exited within ${Math.round(step.ms / 1000)} s on ${on}${last}`;
      return { finding: { result: 'not-checked', detail }, again: false };
    }
    case 'exited': {
      const said = exitMessage(step.log);
      const named = blamed(said, await settingList(s));
      const settings = named.length
        ? `; it names the member's setting${named.length > 1 ? 's' : ''} ${named.map((x) => `${x.key} (${x.from})`).join(', ')}`
        : '';
      return {
        finding: {
          result: 'problem',
          detail: `etcd ${release} exited (${step.code}) ${step.ms} ms after it started on ${on}: "${said || 'it printed nothing'}"${settings}`,
        },
        again: false,
      };
    }
    case 'answered':
      return answered(who, release, step, out, on);
  }
}

function answered(
  who: string,
  release: string,
  step: Extract<StepOutcome, { kind: 'answered' }>,
  out: Extract<DataOutcome, { kind: 'ran' }>,
  on: string,
): { finding: Omit<Verdict, 'hop'>; again: boolean } {
  const at = (out.steps[0] as { revision: string }).revision;
  const started = `etcd ${release} started on ${on} and answered in ${step.ms} ms`;
  const took = times(out.phases, step);
  const notChecked = (detail: string, { again = false }: { again?: boolean } = {}) => ({
    finding: { result: 'not-checked' as const, detail: `data trial: ${started}, but ${detail}` },
    again,
  });
  const problem = (detail: string) => ({
    finding: { result: 'problem' as const, detail: `${started}, but not with the member's data: ${detail} (${took})` },
    again: false,
  });
  const unhashed = 'error' in step.copy && step.copy.error === NOT_HASHED;
  if ('error' in step.copy && !unhashed) {
    if (/future revision/i.test(step.copy.error)) return problem(`it serves revision ${step.revision}, below the copy's ${at}`);
    return notChecked(`its HashKV at revision ${at} failed: ${step.copy.error}`);
  }
  const live: HashRead = out.live ?? { error: 'the live member was not asked' };
  if ('error' in live) {
    if (/unknown method HashKV|Unimplemented/i.test(live.error)) {
      const before = out.liveRevision ? ` (${who} was at ${out.liveRevision} before the copy)` : '';
      if (out.liveRevision && BigInt(step.revision) < BigInt(out.liveRevision)) return problem(`it serves revision ${step.revision}${before}`);
      return {
        finding: {
          result: 'ok',
          detail: `${started}: it served a read at revision ${step.revision}${before}; hashes not compared: ${who} has no HashKV (etcd 3.2) (${took})`,
        },
        again: false,
      };
    }
    if (unhashed) return notChecked(`the copy was not hashed (${who} said it runs etcd 3.2), and its HashKV at revision ${at} failed: ${live.error}`);
    if (/compacted/i.test(live.error)) return notChecked(`${who} compacted past revision ${at} meanwhile: its hash there cannot be asked`, { again: true });
    return notChecked(`the live member's HashKV at revision ${at} failed: ${live.error}`);
  }
  if (unhashed || 'error' in step.copy) return notChecked(`the copy was not hashed (${who} said it runs etcd 3.2, which has no HashKV), but it answers HashKV`);
  // (hashed at the heads: the live member's head must still be the copy's revision for the two to be one state)
  if (out.hashHead && live.revision !== undefined && live.revision !== at)
    return notChecked(`${who} moved from revision ${at} to ${live.revision} while its newest revision was compacted: the hashes cannot be compared`, {
      again: true,
    });
  if (live.hash === step.copy.hash)
    return {
      finding: { result: 'ok', detail: `${started} with the member's data: KV hash ${live.hash} at revision ${at}, as ${who} (${took})` },
      again: false,
    };
  if (live.compact !== step.copy.compact)
    return notChecked(`${who} compacted meanwhile (to ${live.compact}; the copy: ${step.copy.compact}): the hashes at ${at} cannot be compared`, {
      again: true,
    });
  return problem(`its KV hash at revision ${at} is ${step.copy.hash}, ${who}'s is ${live.hash}`);
}

/** "a copy of kv1's data (db 20 KiB, 1 WAL file, 0 .snap files; in a network namespace of its own: unshare -n)". */
function copyOf(member: string, out: DataOutcome): string {
  const c = out.copied;
  const size = c
    ? `db ${formatSize(c.dbBytes)}, ${c.walFiles} WAL file${c.walFiles === 1 ? '' : 's'}, ${c.snapFiles} .snap file${c.snapFiles === 1 ? '' : 's'}`
    : '';
  return `a copy of ${member}'s data (${[size, out.isolation ? `in a network namespace of its own: ${out.isolation}` : ''].filter(Boolean).join('; ')})`;
}

function times(p: { snapshot?: number; copy?: number; liveHash?: number }, step: Extract<StepOutcome, { kind: 'answered' }>): string {
  const hash = step.hashMs === undefined ? undefined : step.hashMs + (p.liveHash ?? 0);
  const parts: Array<[string, number | undefined]> = [
    ['snapshot', p.snapshot],
    ['copy', p.copy],
    ['start', step.ms],
    ['hash', hash],
  ];
  return parts
    .filter((x): x is [string, number] => x[1] !== undefined)
    .map(([k, v]) => `${k} ${v} ms`)
    .join(', ');
}

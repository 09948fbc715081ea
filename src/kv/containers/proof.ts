/**
 * The proof for containers, before any stop: each hop's image started with the member's own settings (its
 * container's command, environment, user, its other mounts read-only) on a copy of its data volume, with no
 * network of its own (`--network none`: the copy holds the member's ID and its peers' URLs, and reaches
 * none of them), its dirs and URLs rewritten as every trial's are (kv/trial/rewrite.ts, --force-new-cluster:
 * alone, it can serve). It passes when the image's etcd answers on the copy with the hop's version (asked
 * by the image's own etcdctl inside the proof container's network); it fails in etcd's own words when the
 * container exits. One copy per member; the hops' images start on it in turn, on the data the one before
 * wrote, as the ladder will take it.
 *
 * The copy is made with the member's container paused (the engine's freezer: a crash-consistent copy of
 * the volume at one instant, the member's process untouched), `cp -a --sparse=always`, then unpaused; the
 * pause's length is said in the finding. A member that sets its WAL dir (wal-dir, on a mount of its own or
 * not) has it copied in the same pause, to the trial's wal-dir.
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { formatSize } from '@opsctl/shared/size.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { minor } from '../cluster/parse.js';
import type { DriverProof, MemberTarget } from '../drivers/driver.js';
import { NoTrial, parseConfigDoc, trialIsContained, trialPlan, type ConfigDoc } from '../trial/rewrite.js';
import type { StartSettings } from '../drivers/start-settings.js';
import { failure, type Engine } from './engine.js';
import { ownEnv, settingOf, type ContainerMount } from './settings.js';
import { placeDirs } from './dirs.js';

/** Where the copy is mounted in the proof container, and its ports there (its own network: nothing else listens). */
const INSIDE = '/opsctl-trial';

/** What the proof asks of the container driver (driver.ts). */
export interface ProofDriver {
  readonly engine: Engine;
  containerOf(m: MemberSpec): string;
  imageOf(version: string): string | undefined;
  startSettings(m: MemberSpec, target: MemberTarget): Promise<StartSettings | { why: string }>;
}
const PORTS = { client: 2379, peer: 2380, metrics: 2381, clientHttp: 2382 };

export async function proveStarts(
  d: ProofDriver,
  m: MemberSpec,
  targets: MemberTarget[],
  timeoutS: number,
  on: 'copy' | 'empty' = 'copy',
): Promise<DriverProof[]> {
  const all = (result: DriverProof['result'], detail: string): DriverProof[] => targets.map(() => ({ result, detail }));
  const engine = d.engine;
  const c = await engine.inspect(m, d.containerOf(m));
  if (!c) return all('not-checked', `the engine has no container ${d.containerOf(m)} (driver.container of member ${m.name} names it)`);
  if (!c.running) return all('not-checked', `${c.name} is not running: its data is proven on a running member's copy`);
  const first = targets[0];
  if (!first) return [];
  const s = await d.startSettings(m, first);
  if ('why' in s) return all('not-checked', s.why);
  if (s.noProgram) return all('not-checked', s.noProgram);
  let doc: ConfigDoc | undefined;
  try {
    doc = s.config ? await parseConfigDoc(s.config.text, s.config.file) : undefined;
  } catch (err) {
    if (err instanceof NoTrial) return all('problem', `${err.message}: etcd would refuse to start on it`);
    throw err;
  }
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const dirs = placeDirs(c, { dataDir: text(doc?.get('data-dir')), walDir: text(doc?.get('wal-dir')) });
  if ('why' in dirs)
    return all(
      'problem',
      `${dirs.why}: it lives in the container's own layer, which the next container (from the hop's image) would not have; move it onto a volume first`,
    );
  const source = dirs.source;
  const mk = await engine.host(m, ['mktemp', '-d', '/var/tmp/opsctl-container-proof.XXXXXX']);
  const scratch = mk.stdout.trim();
  if (mk.exitCode !== 0 || !scratch) return all('not-checked', `no scratch dir on ${m.name}'s host: ${failure(mk, 120_000)}`);
  const out: DriverProof[] = [];
  try {
    // (the copy's owner is the member's: a container run as a user reaches it through the mount)
    await engine.host(m, ['chown', `--reference=${source}`, scratch]);
    await engine.host(m, ['chmod', '0755', scratch]);
    if (on === 'empty') {
      await engine.host(m, ['mkdir', '-m', '0700', `${scratch}/data`]);
      await engine.host(m, ['chown', `--reference=${source}`, `${scratch}/data`]);
    }
    if (on === 'empty' && dirs.wal) {
      await engine.host(m, ['mkdir', '-m', '0700', `${scratch}/wal`]);
      await engine.host(m, ['chown', `--reference=${dirs.wal.source}`, `${scratch}/wal`]);
    }
    const copied =
      on === 'empty' ? 'an empty data dir (its settings alone)' : await copyData(d, m, { container: c.name, source, wal: dirs.wal?.source, scratch });
    if (typeof copied !== 'string') return all('not-checked', copied.why);
    for (const [i, t] of targets.entries()) {
      const found = await startOne(d, m, {
        member: c.name,
        target: t,
        settings: s,
        doc,
        scratch,
        ownMounts: [dirs.mount, ...(dirs.wal ? [dirs.wal.mount] : [])],
        timeoutS,
        copied,
        dataCopy: on === 'copy',
      });
      out.push(found);
      if (found.result !== 'ok') {
        for (const _ of targets.slice(i + 1)) out.push({ result: 'not-checked', detail: `not tried: the hop before (${t.version}) did not start on the copy` });
        break;
      }
    }
    return out;
  } finally {
    await engine.host(m, ['rm', '-rf', '--', scratch]);
  }
}

/**
 * The member's data dir copied into `scratch`/data (and its WAL dir, where it sets one, into `scratch`/wal: the
 * trial's wal-dir) with its container paused (a copy of one instant); what the finding says of it.
 */
async function copyData(
  d: ProofDriver,
  m: MemberSpec,
  o: { container: string; source: string; wal: string | undefined; scratch: string },
): Promise<string | { why: string }> {
  const { container, source, wal, scratch } = o;
  const engine = d.engine;
  const t0 = Date.now();
  await engine.must(m, ['pause', container]);
  let copy;
  try {
    copy = await engine.host(m, ['cp', '-a', '--sparse=always', '--', source, `${scratch}/data`], 600_000);
    if (copy.exitCode === 0 && wal) copy = await engine.host(m, ['cp', '-a', '--sparse=always', '--', wal, `${scratch}/wal`], 600_000);
  } finally {
    await engine.must(m, ['unpause', container]);
  }
  const pausedMs = Date.now() - t0;
  if (copy.exitCode !== 0) return { why: `the copy of ${source}${wal ? ` and ${wal}` : ''} failed: ${failure(copy, 600_000)}` };
  const du = await engine.host(m, ['du', '-sB1', '-c', `${scratch}/data`, ...(wal ? [`${scratch}/wal`] : [])]);
  const bytes = Number(/^(\d+)\s+total$/m.exec(du.stdout)?.[1]);
  const what = wal ? `its data volume and WAL dir (${source}, ${wal}` : `its data volume (${source}`;
  return `a copy of ${what}: ${Number.isFinite(bytes) ? formatSize(bytes) : '?'}; ${container} paused ${pausedMs} ms for it)`;
}

/** One target's image on the copy: started, asked, removed. */
async function startOne(
  d: ProofDriver,
  m: MemberSpec,
  o: {
    member: string;
    target: MemberTarget;
    settings: Parameters<typeof trialPlan>[0];
    doc: ConfigDoc | undefined;
    scratch: string;
    /** The mounts of the member's own data dir and WAL dir: never mounted into a proof. */
    ownMounts: ContainerMount[];
    timeoutS: number;
    copied: string;
    dataCopy: boolean;
  },
): Promise<DriverProof> {
  const { member, target: t, settings: s, doc, scratch, ownMounts, timeoutS, copied, dataCopy } = o;
  const engine = d.engine;
  const image = d.imageOf(t.version)!;
  const fresh = doc && s.config ? await parseConfigDoc(s.config.text, s.config.file) : undefined;
  const plan = trialPlan(s, INSIDE, PORTS, fresh, { dataCopy });
  const leak = trialIsContained(plan, fresh);
  if (leak)
    return { result: 'not-checked', detail: `the settings could not be rewritten safely (${leak}); a proof never runs on the member's own data or ports` };
  if (plan.config) {
    const w = await engine.host(m, ['sh', '-c', 'cat > "$1"', 'sh', `${scratch}/etcd.conf.yml`], 60_000, plan.config.text);
    if (w.exitCode !== 0) return { result: 'not-checked', detail: `the rewritten config file could not be written: ${failure(w, 60_000)}` };
  }
  const c = (await engine.inspect(m, member))!;
  const name = `${member}.opsctl-proof-${randomBytes(4).toString('hex')}`;
  const env = { ...Object.fromEntries(Object.entries(ownEnv(c, undefined)).filter(([k]) => !/^ETCD_/.test(k))), ...plan.env };
  // the member's other mounts (certificates, a config dir), read-only; never its data's or its WAL's
  const others = c.mounts.filter((x) => x.type !== 'tmpfs' && !ownMounts.some((own) => own.destination === x.destination));
  const args = [
    'run',
    '-d',
    '--name',
    name,
    '--network',
    'none',
    ...(c.user ? ['--user', c.user] : []),
    '--mount',
    `type=bind,source=${scratch},destination=${INSIDE}`,
    ...others.flatMap((x) => ['--mount', `type=${x.type},source=${x.source},destination=${x.destination},readonly`]),
    ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    '--entrypoint',
    plan.program[0]!,
    image,
    ...plan.args,
  ];
  const t0 = Date.now();
  const started = await engine.run(m, args);
  if (started.exitCode !== 0) return { result: 'problem', detail: `${image} could not be started: ${failure(started, 120_000)}` };
  try {
    const etcdctl = `${posix.dirname(plan.program[0]!)}/etcdctl`;
    const tls = /^https:/.test(plan.clientUrl) ? ['--insecure-skip-tls-verify', ...clientCert(s.args, s.env)] : [];
    const deadline = t0 + timeoutS * 1000;
    for (;;) {
      const now = await engine.inspect(m, name);
      if (!now?.running) {
        // (the whole log: a flag error comes before etcd's usage text)
        const logs = await engine.run(m, ['logs', name]);
        return { result: 'problem', detail: `etcd ${t.version} (${image}) exited on ${copied}: ${lastWords(`${logs.stdout}\n${logs.stderr}`)}` };
      }
      const r = await engine.run(m, [
        'exec',
        name,
        etcdctl,
        '--endpoints',
        plan.clientUrl,
        ...tls,
        '--command-timeout',
        '2s',
        'endpoint',
        'status',
        '-w',
        'json',
      ]);
      const v = /"version":"([^"]+)"/.exec(r.stdout)?.[1];
      if (r.exitCode === 0 && v) {
        const ms = Date.now() - t0;
        if (minor(v) !== (minor(t.version) ?? t.version)) return { result: 'problem', detail: `${image} runs etcd ${v}, not ${t.version}.x` };
        return {
          result: 'ok',
          ms,
          version: v,
          detail: `etcd ${v} (${image}) started with ${member}'s settings (its command, environment, user and mounts; --network none) on ${copied} and answered in ${ms} ms`,
        };
      }
      if (/executable file not found|no such file/i.test(r.stderr))
        return {
          result: 'not-checked',
          detail: `${image} has no ${etcdctl} to ask its etcd (the proof asks inside the container's own network): build the image with etcdctl beside etcd, as etcd's own images have`,
        };
      if (Date.now() > deadline)
        return { result: 'problem', detail: `etcd ${t.version} (${image}) did not answer on ${copied} within ${timeoutS} s: ${lastWords(r.stderr)}` };
      await new Promise((ok) => setTimeout(ok, 300));
    }
  } finally {
    await engine.run(m, ['rm', '-f', name]);
  }
}

/** The member's own client certificate, where it asks clients for one. */
function clientCert(args: string[], env: Record<string, string>): string[] {
  const s = { argv: ['etcd', ...args], env };
  if (settingOf(s, 'client-cert-auth') !== 'true') return [];
  const cert = settingOf(s, 'cert-file');
  const key = settingOf(s, 'key-file');
  return cert && key ? ['--cert', cert, '--key', key] : [];
}

/** etcd's last words: a Go panic's or a flag error's line, else the last lines of its log (each JSON line's message and error). */
export function lastWords(text: string): string {
  const raw = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const key = raw.find((l) => /^panic: |flag provided but not defined|^Error: /.test(l));
  const lines = raw.map((l) => {
    try {
      const j = JSON.parse(l) as { level?: string; msg?: string; error?: string };
      return { fatal: j.level === 'fatal' || j.level === 'panic', text: [j.msg, j.error].filter(Boolean).join(': ') };
    } catch {
      return { fatal: false, text: l };
    }
  });
  const fatal = lines.find((l) => l.fatal)?.text;
  const words =
    [fatal, key].filter(Boolean).join(' | ') ||
    lines
      .slice(-3)
      .map((l) => l.text)
      .join(' | ');
  return words.length > 500 ? `${words.slice(0, 500)}…` : words || '(no output)';
}

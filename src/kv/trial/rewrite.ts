/**
 * A member's settings made into a trial's: the same program, flags, ETCD_* variables and config
 * file, with only what would collide with the member itself rewritten, wherever it is set (file,
 * flag or variable, each in its own form, so a variable shadowed by a flag stays shadowed):
 * the data and WAL dirs (a scratch dir), the client, peer and metrics URLs (free loopback ports, the
 * same scheme), the initial cluster (this member alone, state new), discovery (a member with data
 * never runs it), log files (beside the scratch data). Everything else is left as written.
 */
import { configFileOf, envName, flagWords, type StartSettings } from '../drivers/start-settings.js';
import { parseYamlDocument, yamlLib, YamlTextError } from '../../core/yaml.js';

export interface TrialPorts {
  client: number;
  peer: number;
  metrics: number;
  clientHttp: number;
}

/** What the trial runs on the member's host. */
export interface TrialPlan {
  program: string[];
  args: string[];
  env: Record<string, string>;
  /** The rewritten config file, written into the scratch dir first. */
  config?: { path: string; text: string };
  cwd: string;
  /** The trial member's client URL (its /health is asked). */
  clientUrl: string;
  /** Where the scratch dir is (created by the trial, removed after it). */
  dir: string;
  /** What was rewritten or dropped, for the plan's detail line. */
  notes: string[];
}

/** Thrown when the settings cannot be rewritten safely: the trial is not run (it must never touch the member's own data). */
export class NoTrial extends Error {}

/** Keys that start discovery: dropped (a member that has data never runs it; a trial must not register anywhere). */
const DISCOVERY = ['discovery', 'discovery-srv', 'discovery-endpoints', 'discovery-token'];
/** log-outputs values that are not files. */
const LOG_SINKS = new Set(['default', 'stderr', 'stdout', 'journal', 'systemd/journal']);

function schemeOf(urls: unknown, fallback: 'http' | 'https'): 'http' | 'https' {
  const first = String(typeof urls === 'string' ? urls : Array.isArray(urls) ? (urls[0] ?? '') : '')
    .split(',')[0]!
    .trim();
  if (/^(https|unixs):/i.test(first)) return 'https';
  if (/^(http|unix):/i.test(first)) return 'http';
  return fallback;
}

/** How the plan differs for a data trial (trial/data.ts): the copy of the member's data lies in the scratch dir's data (and wal) dir. */
export interface TrialPlanOptions {
  /**
   * The data dir (and the WAL dir, where the member sets one) hold a copy of the member's own data: the
   * target starts on it as the only member left (--force-new-cluster: the copy's peers are out of reach in
   * its network namespace, and without a quorum etcd would never serve its clients), elected at once
   * (heartbeat 10 ms, election 100 ms: a member's own, up to 50 s on a WAN, would be waited for twice; alone,
   * no timing of its own is tried).
   */
  dataCopy?: boolean;
}

/** etcd's election timing when a member leaves it unset: the same in every 3.x release (embed.NewConfig). */
const TIMING_DEFAULTS: Record<string, number> = { 'heartbeat-interval': 100, 'election-timeout': 1000 };

/**
 * Whether the member's election timing is etcd's own (unset, or set to the defaults, 100 and 1000 ms): the
 * only settings of the member a data trial's start replaces beyond what the settings trial rewrites too
 * (dirs, URLs, initial cluster, discovery). There the data trial's start judges every setting of the member
 * as the hop's start will meet it, and a settings trial of its own adds nothing the hop does (trial/run.ts).
 */
export function timingIsDefault(s: StartSettings, configDoc?: ConfigDoc): boolean {
  return Object.entries(TIMING_DEFAULTS).every(([key, dflt]) => {
    let v: unknown;
    if (configDoc) v = configDoc.get(key);
    else {
      const f = flagWords(s.args).find((x) => x.key === key);
      v = f ? f.value : s.env[envName(key)];
    }
    return v === undefined || (typeof v === 'number' && v === dflt) || (typeof v === 'string' && v.trim() !== '' && Number(v) === dflt);
  });
}

/** The data trial's values as YAML must type them. */
const TYPED: Record<string, boolean | number> = { 'force-new-cluster': true, 'heartbeat-interval': 10, 'election-timeout': 100 };

export function trialPlan(s: StartSettings, dir: string, ports: TrialPorts, configDoc?: ConfigDoc, o: TrialPlanOptions = {}): TrialPlan {
  const notes: string[] = [];
  const file = configFileOf(s.args, s.env);
  if (file && !s.config) throw new NoTrial(`the start names the config file ${file}, which could not be read`);
  if (s.config && !configDoc) throw new NoTrial('the config file was not parsed');
  const get = (key: string): unknown => {
    if (configDoc) return configDoc.get(key);
    const f = flagWords(s.args).find((x) => x.key === key);
    return f ? f.value : s.env[envName(key)];
  };
  const clientScheme = schemeOf(get('listen-client-urls') ?? get('advertise-client-urls'), 'http');
  const peerScheme = schemeOf(get('listen-peer-urls') ?? get('initial-advertise-peer-urls'), 'http');
  const given = get('name');
  const name = typeof given === 'string' && given ? given : 'default';
  const client = `${clientScheme}://127.0.0.1:${ports.client}`;
  const peer = `${peerScheme}://127.0.0.1:${ports.peer}`;
  const values: Record<string, string> = {
    'data-dir': `${dir}/data`,
    'listen-client-urls': client,
    'advertise-client-urls': client,
    'listen-peer-urls': peer,
    'initial-advertise-peer-urls': peer,
    'initial-cluster': `${name}=${peer}`,
    'initial-cluster-state': 'new',
    ...(o.dataCopy ? { 'force-new-cluster': 'true', 'heartbeat-interval': '10', 'election-timeout': '100' } : {}),
  };
  // Set only where the member sets them: a trial adds no listener or directory the member has not.
  const ifSet: Record<string, string> = {
    'wal-dir': `${dir}/wal`,
    'listen-metrics-urls': `${schemeOf(get('listen-metrics-urls'), 'http')}://127.0.0.1:${ports.metrics}`,
    'listen-client-http-urls': `${clientScheme}://127.0.0.1:${ports.clientHttp}`,
  };
  const logFile = (v: string) => (LOG_SINKS.has(v) ? v : `${dir}/log-${v.split('/').pop() || 'etcd'}`);
  const logValue = (v: unknown): string | string[] | undefined => {
    if (typeof v === 'string') return v.split(',').map(logFile).join(',');
    if (Array.isArray(v)) return v.map((x) => logFile(String(x)));
    return undefined;
  };
  const rewriteValue = (key: string, v: unknown): unknown => {
    if (key in values) return values[key];
    if (key in ifSet) return ifSet[key];
    if (key === 'log-outputs' || key === 'log-output') return logValue(v) ?? v;
    return v;
  };
  const touched = new Set<string>();
  const dropped = new Set<string>();
  // Flags: each rewritten in place, in its own form (--k=v stays one word, --k v two).
  const args: string[] = [];
  const words = flagWords(s.args);
  const byIndex = new Map(words.map((w) => [w.at, w]));
  for (let i = 0; i < s.args.length; i++) {
    const w = byIndex.get(i);
    if (!w) {
      args.push(s.args[i]!);
      continue;
    }
    const skip = w.joined ? 0 : 1;
    if (DISCOVERY.includes(w.key)) {
      dropped.add(`--${w.key}`);
      i += skip;
      continue;
    }
    if (w.key === 'config-file') {
      args.push(...(w.joined ? [`${s.args[i]!.split('=')[0]}=${dir}/etcd.conf.yml`] : [s.args[i]!, `${dir}/etcd.conf.yml`]));
      i += skip;
      continue;
    }
    const next = typeof w.value === 'string' ? rewriteValue(w.key, w.value) : w.value;
    if (next !== w.value) touched.add(w.key);
    const text = String(next);
    if (w.joined) args.push(next === w.value ? s.args[i]! : `${s.args[i]!.split('=')[0]}=${text}`);
    else args.push(s.args[i]!, text);
    i += skip;
  }
  // Variables: the same, each where it is.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.env)) {
    const key = /^ETCD_/.test(k) ? k.slice(5).toLowerCase().replace(/_/g, '-') : undefined;
    if (key && DISCOVERY.includes(key)) {
      dropped.add(k);
      continue;
    }
    if (k === 'ETCD_CONFIG_FILE') {
      env[k] = `${dir}/etcd.conf.yml`;
      continue;
    }
    const next = key ? rewriteValue(key, v) : v;
    if (key && next !== v) touched.add(key);
    env[k] = String(next);
  }
  // The config file: every key rewritten there, and what the member does not set added there (etcd
  // reads nothing else beside a config file); without one, as flags.
  let config: TrialPlan['config'];
  if (configDoc) {
    for (const key of DISCOVERY) if (configDoc.delete(key)) dropped.add(`${key} (config file)`);
    for (const key of [...Object.keys(values), ...Object.keys(ifSet), 'log-outputs', 'log-output']) {
      const had = configDoc.get(key);
      if (had === undefined && !(key in values)) continue;
      const next = rewriteValue(key, had);
      if (next !== had) {
        // (a bool and numbers in YAML: etcd refuses the quoted strings "true" and "100" there)
        configDoc.set(key, key in TYPED ? TYPED[key] : next);
        touched.add(key);
      }
    }
    config = { path: `${dir}/etcd.conf.yml`, text: configDoc.text() };
  } else {
    const set = new Set([
      ...flagWords(s.args).map((w) => w.key),
      ...Object.keys(s.env).map((k) => (/^ETCD_/.test(k) ? k.slice(5).toLowerCase().replace(/_/g, '-') : '')),
    ]);
    for (const [key, v] of Object.entries(values)) {
      if (set.has(key)) continue;
      args.push(`--${key}=${v}`);
      touched.add(key);
    }
  }
  notes.push(`rewritten: ${[...touched].sort().join(', ')}`);
  if (o.dataCopy) notes.push("the data dir is a copy of the member's data");
  if (dropped.size) notes.push(`dropped: ${[...dropped].join(', ')} (a member with data never runs discovery)`);
  return { program: s.program, args, env, ...(config ? { config } : {}), cwd: s.cwd ?? dir, clientUrl: client, dir, notes };
}

/** A parsed config file the rewrite edits (yaml's Document: comments, order and every other key kept). */
export interface ConfigDoc {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  delete(key: string): boolean;
  text(): string;
}

/** The member's config file as a ConfigDoc; throws NoTrial when it is not a YAML map (etcd would refuse it: the trial says so). */
export async function parseConfigDoc(text: string, file: string): Promise<ConfigDoc> {
  const y = await yamlLib();
  let doc;
  try {
    doc = await parseYamlDocument(text);
  } catch (err) {
    if (!(err instanceof YamlTextError)) throw err;
    throw new NoTrial(`the config file ${file} is not valid YAML (${err.message})`);
  }
  const root = doc.contents;
  if (root !== null && !y.isMap(root)) throw new NoTrial(`the config file ${file} is not a map of settings`);
  return {
    get: (key) => {
      const v = doc.get(key);
      return y.isNode(v) ? (v.toJSON() as unknown) : v;
    },
    set: (key, value) => doc.set(key, value),
    delete: (key) => doc.delete(key),
    text: () => doc.toString(),
  };
}

/** Whether every place the trial could write or listen is its own: a last check before anything runs. */
export function trialIsContained(p: TrialPlan, configDoc?: ConfigDoc): string | undefined {
  const inDir = (v: unknown) => typeof v === 'string' && (v === `${p.dir}/data` || v === `${p.dir}/wal` || v.startsWith(`${p.dir}/`));
  const local = (v: unknown) =>
    String(Array.isArray(v) ? v.join(',') : v)
      .split(',')
      .every((u) => /^(https?):\/\/127\.0\.0\.1:\d+$/.test(u.trim()));
  const get = (key: string): unknown => {
    if (p.config && configDoc) return configDoc.get(key);
    const f = flagWords(p.args).find((x) => x.key === key);
    return f ? f.value : p.env[envName(key)];
  };
  if (!inDir(get('data-dir'))) return `its data dir would be ${JSON.stringify(get('data-dir'))}`;
  const wal = get('wal-dir');
  if (wal !== undefined && wal !== '' && !inDir(wal)) return `its WAL dir would be ${JSON.stringify(wal)}`;
  for (const key of ['listen-client-urls', 'listen-peer-urls', 'listen-metrics-urls', 'listen-client-http-urls']) {
    const v = get(key);
    if (v !== undefined && v !== '' && !local(v)) return `its ${key} would be ${JSON.stringify(v)}`;
  }
  return undefined;
}

import { describe, expect, it } from 'vitest';
import { checkHop, RULEBOOK } from '../../src/kv/rules/index.js';
import type { HopFacts, Setting } from '../../src/kv/rules/types.js';
import { exitMessage } from '../../src/kv/trial/verdict.js';
import { probeEtcd, type Probe } from '../helpers/etcd-probe.js';
import { etcdLadderDirs, etcdVersionOf, ladderVersions } from '../helpers/etcd-releases.js';

/**
 * The rulebook against etcd's own words (issue 57, item 6). Every rule that judges a setting by its key
 * (`Rule.keys`: a flag, its ETCD_* variable) says, for the version it names (its hop's target), whether that
 * version refuses it. Here each such rule's every key is given to that version's real binary, as a flag and
 * as a variable, alone on a scratch data dir and loopback ports, and the rule's verdict is held to what the
 * binary does:
 * - the binary exits: the rule refuses, and quotes etcd's words (a quoted phrase of the finding is in what
 *   the binary wrote);
 * - the binary serves: the rule does not refuse, or refuses saying that etcd starts (ignores it), for a reason
 *   of its own; either way every phrase of etcd it quotes is in what the binary wrote (a warning, say).
 * A rule that refuses what the binary accepts, or words etcd does not say, is a finding of this test.
 *
 * Each binary runs only until it serves or exits; the versions' probes run side by side, a few at a time.
 */
const dirs = etcdLadderDirs();

/** Values to start each key with: etcd's default or a harmless one (a flag's name decides most verdicts; the value some). */
const VALUES: Record<string, string[] | null> = {
  'log-output': ['default'],
  'ca-file': ['/nonexistent/ca.pem'],
  'peer-ca-file': ['/nonexistent/ca.pem'],
  'enable-v2': ['true', 'false'],
  debug: ['true'],
  'log-package-levels': ['etcdserver=INFO'],
  logger: ['capnslog', 'zap'],
  'experimental-enable-v2v3': ['/v2v3/'],
  proxy: ['off'],
  'proxy-failure-wait': ['5000'],
  'proxy-refresh-interval': ['30000'],
  'proxy-dial-timeout': ['1000'],
  'proxy-write-timeout': ['5000'],
  'proxy-read-timeout': ['0'],
  'discovery-fallback': ['proxy', 'exit'],
  discovery: ['http://127.0.0.1:9/v2/keys/discovery/probe'],
  'discovery-proxy': ['http://127.0.0.1:9'],
  'v2-deprecation': ['not-yet', 'write-only', 'write-only-skip-check', 'gone'],
  'experimental-bootstrap-defrag-threshold-megabytes': ['0'],
  'experimental-compact-hash-check-enabled': ['false'],
  'experimental-compact-hash-check-time': ['1m0s'],
  'experimental-compaction-batch-limit': ['1000'],
  'experimental-compaction-sleep-interval': ['10ms'],
  'experimental-corrupt-check-time': ['0s'],
  'experimental-distributed-tracing-address': ['localhost:4317'],
  'experimental-distributed-tracing-instance-id': ['probe'],
  'experimental-distributed-tracing-sampling-rate': ['0'],
  'experimental-distributed-tracing-service-name': ['etcd'],
  'experimental-downgrade-check-time': ['5s'],
  'experimental-enable-distributed-tracing': ['false'],
  'experimental-enable-lease-checkpoint': ['false'],
  'experimental-enable-lease-checkpoint-persist': ['false'],
  'experimental-initial-corrupt-check': ['true'],
  'experimental-memory-mlock': ['false'],
  'experimental-peer-skip-client-san-verification': ['false'],
  'experimental-snapshot-catchup-entries': ['5000'],
  'experimental-stop-grpc-service-on-defrag': ['false'],
  'experimental-txn-mode-write-with-shared-buffer': ['true'],
  'experimental-warning-apply-duration': ['100ms'],
  'experimental-warning-unary-request-duration': ['300ms'],
  'experimental-watch-progress-notify-interval': ['10m0s'],
  // a config file's spelling only (etcd-io/etcd#15033): no flag or variable of that name in any version
  'experimental-snapshot-catch-up-entries': null,
};

const FROM: Record<string, string> = { '3.3': '3.2', '3.4': '3.3', '3.5': '3.4', '3.6': '3.5', '3.7': '3.6' };

interface Case {
  minor: string;
  /** Every rule of the version's table that reads the key (their verdicts together are the rulebook's). */
  rules: string[];
  key: string;
  value: string;
  form: 'flag' | 'env';
}

const envName = (key: string) => `ETCD_${key.toUpperCase().replace(/-/g, '_')}`;

/** Every key a rule judges, with each value and form, for each version's table. */
function cases(): Case[] {
  const out: Case[] = [];
  for (const [minor, rules] of Object.entries(RULEBOOK)) {
    const keys = [...new Set(rules.flatMap((r) => r.keys ?? []))];
    for (const key of keys) {
      const by = rules.filter((r) => r.keys?.includes(key)).map((r) => r.id);
      for (const value of VALUES[key] ?? []) for (const form of ['flag', 'env'] as const) out.push({ minor, rules: by, key, value, form });
    }
  }
  return out;
}

/** The rulebook's verdict on one setting of one member, as the plan would show it: refuse when one of the rules refuses. */
async function verdictOf(c: Case, binaryVersion: string): Promise<{ status: string; detail: string; by: string }> {
  const setting: Setting =
    c.form === 'flag'
      ? { key: c.key, value: c.value, from: `flag --${c.key} in the probe's command line`, flag: true }
      : { key: c.key, value: c.value, from: `environment ${envName(c.key)} of the probe`, flag: true, env: true };
  const facts: HopFacts = {
    from: FROM[c.minor]!,
    to: c.minor,
    binaryVersion,
    current: true,
    members: [{ name: 'probe', serverVersion: `${FROM[c.minor]}.0`, settings: { source: 'the probe', list: [setting] } }],
  };
  const rules = RULEBOOK[c.minor]!.filter((r) => c.rules.includes(r.id));
  const rows = (await checkHop(facts, rules)).filter((x) => x.member === 'probe');
  const rank = ['ok', 'warn', 'refuse'];
  const status = rows.map((r) => r.status).reduce((a, b) => (rank.indexOf(b) > rank.indexOf(a) ? b : a), 'ok');
  const shown = rows.filter((r) => r.status === status);
  return { status, detail: rows.map((r) => r.detail).join(' | '), by: shown.map((r) => r.rule).join(', ') };
}

/**
 * The phrases a finding quotes that read as etcd's words: a few words in double quotes (a quote opens after a space
 * or a bracket and closes before one, or a stop; quotes inside it are etcd's own, paired), not a quoted value.
 */
function quotedWords(detail: string): string[] {
  const out: string[] = [];
  for (let i = detail.indexOf('"'); i >= 0; i = detail.indexOf('"', i + 1)) {
    if (i > 0 && !/[\s(]/.test(detail[i - 1]!)) continue;
    let close = -1;
    for (let j = i + 1, inner = 0; j < detail.length && close < 0; j++)
      if (detail[j] === '"') {
        if (inner % 2 === 0 && (j + 1 === detail.length || /[\s),;:.]/.test(detail[j + 1]!))) close = j;
        else inner++;
      }
    if (close < 0) break;
    const q = detail.slice(i + 1, close);
    if (q.length >= 12 && /\s/.test(q)) out.push(q);
    i = close;
  }
  return out;
}

/** What a binary wrote, its JSON log's escapes read as text. */
const plain = (s: string) => s.replace(/\\"/g, '"').toLowerCase();

/** Why the rule and the binary disagree; undefined when they agree. */
function disagreement(v: { status: string; detail: string }, p: Probe): string | undefined {
  const out = plain(p.output);
  const quoted = quotedWords(v.detail);
  const missing = quoted.filter((q) => !out.includes(q.toLowerCase()));
  if (!p.served) {
    if (v.status !== 'refuse') return `the binary exits (${p.exitCode}) and the rule says ${v.status}`;
    if (!quoted.some((q) => out.includes(q.toLowerCase()))) return `the binary exits (${p.exitCode}) and the finding quotes none of its words`;
  } else if (v.status === 'refuse' && !/ignor|starts/i.test(v.detail)) return 'the binary serves and the rule refuses without saying it starts';
  if (missing.length) return `the finding quotes words the binary did not write: ${missing.map((q) => JSON.stringify(q)).join(', ')}`;
  return undefined;
}

/** The binary's words that matter: why it exited, or its warning about the setting. */
function said(p: Probe, c: Case): string {
  if (!p.served) return exitMessage(p.output).slice(0, 160);
  const warning = p.output.split('\n').find((l) => (l.includes(c.key) || l.includes(envName(c.key))) && /warn|\bW \|/i.test(l) && !/"msg":"Running: "/.test(l));
  if (!warning) return '';
  const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(warning)?.[1];
  return (msg ?? warning.replace(/^.* \| /, '')).replace(/\\"/g, '"').slice(0, 160);
}

/** At most `n` at once. */
async function pool<T, R>(items: T[], n: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
    }),
  );
  return out;
}

describe.runIf(Boolean(dirs))('the rulebook against etcd: every rule that judges a flag or variable, held to a real start of the version it names', () => {
  it('each rule agrees with its binary on every key, value and form', async () => {
    const bins = new Map(ladderVersions(dirs));
    const all = cases();
    // every key a rule judges has a value to start it with (a new rule's key is probed too)
    const unknown = Object.values(RULEBOOK)
      .flat()
      .flatMap((r) => (r.keys ?? []).filter((k) => !(k in VALUES)).map((k) => `${r.id}: ${k}`));
    expect(unknown, 'a key with no probe value in VALUES').toEqual([]);
    expect(new Set(all.flatMap((c) => c.rules)), 'every rule with keys is probed').toEqual(
      new Set(
        Object.values(RULEBOOK)
          .flat()
          .filter((r) => r.keys?.length)
          .map((r) => r.id),
      ),
    );
    const t0 = Date.now();
    const results = await pool(all, 3, async (c) => {
      const dir = bins.get(c.minor)!;
      const version = etcdVersionOf(dir)!;
      const v = await verdictOf(c, version);
      const p = await probeEtcd(dir, c.form === 'flag' ? { args: [`--${c.key}=${c.value}`] } : { env: { [envName(c.key)]: c.value } });
      return { c, version, v, p, wrong: disagreement(v, p) };
    });
    const rows = results.map(
      ({ c, version, v, p, wrong }) =>
        `${wrong ? 'DISAGREE' : 'agree   '} ${version.padEnd(7)} ${(c.form === 'flag' ? `--${c.key}=${c.value}` : `${envName(c.key)}=${c.value}`).padEnd(58)} ` +
        `rules: ${v.status.padEnd(7)}${v.status === 'ok' ? '' : ` [${v.by}]`} etcd: ${p.served ? 'serves' : `exits ${p.exitCode}`} in ${p.ms} ms: ${said(p, c)}${wrong ? `\n           ${wrong}\n           finding: ${v.detail}` : ''}`,
    );
    console.log(`the rulebook against etcd: ${results.length} starts in ${Date.now() - t0} ms\n${rows.join('\n')}`);
    expect(results.filter((r) => r.wrong).map((r) => `${r.version} [${r.c.rules.join(', ')}] ${r.c.form} ${r.c.key}=${r.c.value}: ${r.wrong}`)).toEqual([]);
  }, 1_800_000);
});

/**
 * The `--experimental-*` flags etcd 3.6 deprecated and 3.7 removed, with the exact setting that
 * replaces each one where the member sets it (a flag, an ETCD_* variable or a config file key), so a
 * member that carries several is told all of them, and all their replacements, at once.
 *
 * Measured on 3.7.3: a removed flag on the command line stops it at once ("flag provided but not
 * defined", exit 2, naming only the first); a removed ETCD_EXPERIMENTAL_* variable is "unrecognized"
 * (a warning) and a removed config file key is ignored, so 3.7 starts without the setting: the
 * initial corruption check kubeadm turned on is silently off. 3.6.16 takes the new names, and refuses
 * an old and a new one together ("cannot specify both flags"): the old is replaced, not doubled.
 */
import { RENAMED_36 } from './hop-3.6.js';
import type { Finding, MemberFacts, Setting } from './types.js';

/** Removed in 3.7: exactly the flags 3.6.16's --help has and 3.7.3's lacks (the 23 that 3.6 renamed). */
export const REMOVED_37: Readonly<Record<string, string>> = RENAMED_36;

/** The config file spells one of them otherwise (3.6's JSON tag, kept apart from its flag by mistake: etcd-io/etcd#15033). */
const FILE_ALIASES: Readonly<Record<string, string>> = { 'experimental-snapshot-catch-up-entries': 'experimental-snapshot-catchup-entries' };

/** Every key the rule reads: each removed flag, its config file alias, and feature-gates (merged into the fix). */
export const EXPERIMENTAL_KEYS = [...Object.keys(REMOVED_37), ...Object.keys(FILE_ALIASES)];

type Form = 'flag' | 'env' | 'file';

const formOf = (s: Setting): Form => (s.env ? 'env' : s.flag ? 'flag' : 'file');
const envName = (key: string) => `ETCD_${key.toUpperCase().replace(/-/g, '_')}`;

/** A setting as written in its form: `--key=value` (a bare bool flag: `--key`), `ETCD_KEY=value`, `key: value`. */
function written(form: Form, key: string, value: unknown): string {
  const v = typeof value === 'string' ? value : JSON.stringify(value);
  if (form === 'flag') return value === true ? `--${key}` : `--${key}=${v}`;
  if (form === 'env') return `${envName(key)}=${v}`;
  return `${key}: ${v}`;
}

/** A removed flag's replacement: a feature gate (`InitialCorruptCheck`), or the flag without its prefix. */
function replacementOf(key: string): { gate: string } | { key: string } | undefined {
  const to = REMOVED_37[FILE_ALIASES[key] ?? key];
  if (!to) return undefined;
  const gate = /^--feature-gates=([A-Za-z]+)=/.exec(to)?.[1];
  return gate ? { gate } : { key: to.replace(/^--/, '') };
}

const gateValue = (v: unknown) => (v === true || v === undefined ? 'true' : typeof v === 'string' ? v.trim() : JSON.stringify(v));

/** What 3.7 does with a removed setting in each form (measured on 3.7.3). */
const FATE: Record<Form, string> = {
  flag: '3.7 exits at start ("flag provided but not defined")',
  env: '3.7 ignores it ("unrecognized environment variable") and starts without the setting',
  file: '3.7 ignores the key and starts without the setting',
};

/** One member's finding: every removed setting it carries, where, and the exact replacements, per form. */
export function experimentalFinding(m: MemberFacts): Finding {
  if (!m.settings)
    return {
      member: m.name,
      result: 'not-checked',
      detail: 'the driver reads no config file, unit or flags of this member (give --config-cmd, or configFile in the cluster file)',
    };
  if ('why' in m.settings) return { member: m.name, result: 'not-checked', detail: m.settings.why };
  const all = m.settings.list;
  const removed = all.filter((s) => replacementOf(s.key));
  if (!removed.length) return { member: m.name, result: 'ok', detail: `none of the ${EXPERIMENTAL_KEYS.length} removed --experimental-* names set` };
  const problems = removed.map((s) => `${written(formOf(s), s.key, s.value)} (${s.from}): ${FATE[formOf(s)]}`);
  const fixes: string[] = [];
  for (const form of ['flag', 'env', 'file'] as const) {
    const old = removed.filter((s) => formOf(s) === form);
    if (!old.length) continue;
    const plain: string[] = [];
    const gates: string[] = [];
    for (const s of old) {
      const r = replacementOf(s.key)!;
      if ('gate' in r) gates.push(`${r.gate}=${gateValue(s.value)}`);
      else plain.push(written(form, r.key, s.value));
    }
    // Gates already set in the same form are kept: one feature-gates setting holds them all.
    const had = all.filter((s) => s.key === 'feature-gates' && formOf(s) === form).flatMap((s) => String(s.value).split(','));
    const keep = had.map((g) => g.trim()).filter((g) => g && !gates.some((n) => n.split('=')[0] === g.split('=')[0]));
    const news = gates.length ? [written(form, 'feature-gates', [...keep, ...gates].join(','))] : [];
    const what = form === 'flag' ? 'the flags' : form === 'env' ? 'the variables' : 'the config file keys';
    fixes.push(`replace ${what} ${old.map((s) => written(form, s.key, s.value)).join(', ')} with ${[...news, ...plain].join(form === 'file' ? ', ' : ' ')}`);
  }
  return {
    member: m.name,
    result: 'problem',
    detail: `${removed.length} removed in 3.7: ${problems.join('; ')}; fix: ${fixes.join('; ')} (on 3.6 first, member by member: 3.6 takes the new names, and refuses an old name beside its new one)`,
  };
}

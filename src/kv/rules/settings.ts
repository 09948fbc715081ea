import type { Finding, HopFacts, MemberFacts, Rule, RuleSource, Setting, Severity } from './types.js';
import { parseYamlOrUndefined } from '../../core/yaml.js';

/**
 * A member's settings from what the driver reads: a YAML config file (etcd --config-file), or a
 * systemd unit, an environment file or a start command line (`--flag=value`, `--flag value`,
 * `ETCD_FLAG_NAME=value`). Undefined when the text is neither.
 */
export async function settingsOf(text: string, file: string): Promise<{ source: string; list: Setting[] }> {
  const parsed = await parseYamlOrUndefined(text);
  // (A YAML map is a config file, unless it is a unit or an environment file that YAML happens to read.)
  const looksLikeUnit = /^\s*(ExecStart|Environment(File)?)\s*=|^\s*ETCD_[A-Z0-9_]+=/m.test(text);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && !looksLikeUnit) {
    const list = Object.entries(parsed as Record<string, unknown>).map(([key, value]) => ({ key, value, from: `config file ${file}`, flag: false }));
    return { source: `config file ${file}`, list };
  }
  const list: Setting[] = [];
  const what = /^\s*\[Unit\]|^\s*ExecStart\s*=/m.test(text) ? `systemd unit ${file}` : file;
  for (const m of text.matchAll(/^\s*(?:Environment\s*=\s*"?)?ETCD_([A-Z0-9_]+)=("?)([^"\n]*)\2/gm)) {
    list.push({ key: (m[1] ?? '').toLowerCase().replace(/_/g, '-'), value: m[3] ?? '', from: `environment ETCD_${m[1]} in ${what}`, flag: true, env: true });
  }
  const tokens = text.split(/[\s\\]+/).filter(Boolean);
  tokens.forEach((tok, i) => {
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(tok.replace(/^["']|["']$/g, ''));
    if (!m || !m[1]) return;
    const next = tokens[i + 1];
    const value = m[2] !== undefined ? m[2] : next !== undefined && !next.startsWith('-') ? next : true;
    list.push({ key: m[1], value, from: `flag --${m[1]} in ${what}`, flag: true });
  });
  return { source: what, list };
}

/**
 * What etcd does with an ETCD_* variable of a flag it no longer defines (measured on 3.4.23, 3.5.35, 3.6.16
 * and 3.7.3 alike): it starts, with a warning "unrecognized environment variable", and without the
 * setting. Only the flag stops it ("flag provided but not defined", exit 2).
 */
export const UNRECOGNIZED_ENV = 'ignored: etcd starts without it, warning "unrecognized environment variable"';

/** Whether a setting's value says "on" (true, "true"; a bare flag). */
export function isOn(v: unknown): boolean {
  return v === true || (typeof v === 'string' && v.trim().toLowerCase() === 'true');
}

/** The member's settings for `keys`, or the reason they could not be read. */
function found(m: MemberFacts, keys: string[]): Setting[] | { why: string } {
  if (!m.settings) return { why: 'the driver reads no config file, unit or flags of this member (give --config-cmd, or configFile in the cluster file)' };
  if ('why' in m.settings) return { why: m.settings.why };
  return m.settings.list.filter((s) => keys.includes(s.key));
}

/**
 * A rule over settings: for each member, each setting named by `keys` is passed to `problem`, which
 * says what is wrong with it (undefined: nothing). A member whose settings could not be read is
 * "not checked", with the reason.
 */
export function settingRule(r: {
  id: string;
  check: string;
  keys: string[];
  severity: Severity;
  fix: string;
  guide: string;
  where?: RuleSource[];
  problem(s: Setting, f: HopFacts): string | undefined;
  /**
   * What the target does with a setting `problem` lets through, where that is worth saying on its ok row
   * (an ETCD_* variable the target no longer defines: it starts, warning "unrecognized environment variable").
   */
  note?(s: Setting): string | undefined;
  /** The finding when no member sets any of the keys (default: ok, "not set"). */
  absent?: (m: MemberFacts, f: HopFacts) => Finding;
}): Rule {
  return {
    id: r.id,
    check: r.check,
    where: r.where ?? ['config file', 'flags', 'systemd unit'],
    severity: r.severity,
    fix: r.fix,
    guide: r.guide,
    keys: r.keys,
    test(f) {
      return f.members.map((m): Finding => {
        const s = found(m, r.keys);
        if ('why' in s) return { member: m.name, result: 'not-checked', detail: s.why };
        const problems = s.map((x) => r.problem(x, f)).filter((x): x is string => Boolean(x));
        if (problems.length) return { member: m.name, result: 'problem', detail: problems.join('; ') };
        if (!s.length && r.absent) return r.absent(m, f);
        return {
          member: m.name,
          result: 'ok',
          detail: s.length
            ? s
                .map((x) => {
                  const said = r.note?.(x);
                  return `${x.key}: ${JSON.stringify(x.value)} (${x.from})${said ? `: ${said}` : ''}`;
                })
                .join(', ')
            : r.keys.length > 3
              ? `none of the ${r.keys.length} names set`
              : `${r.keys.join(', ')} not set`,
        };
      });
    },
  };
}

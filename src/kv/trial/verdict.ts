/**
 * What a trial member that exited said, in its own words, and which of the member's settings the
 * words name: etcd writes Go flag errors as plain lines ("flag provided but not defined: -proxy"),
 * capnslog lines up to 3.4 ("… C | pkg/flags: conflicting environment variable …"), and zap JSON from
 * 3.4 (--logger=zap) and 3.5 ({"level":"warn","msg":"failed to verify flags","error":"…"}).
 */
import type { Setting } from '../rules/types.js';
import { shownValue } from './settings.js';
import { envKey } from '../drivers/start-settings.js';

interface LogLine {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'other';
  text: string;
}

const CAPNS_LEVEL: Record<string, LogLine['level']> = { C: 'fatal', E: 'error', W: 'warn', N: 'info', I: 'info', D: 'info', T: 'info' };

function readLine(raw: string): LogLine | undefined {
  const line = raw.trim();
  if (!line) return undefined;
  if (line.startsWith('{')) {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (typeof o.msg === 'string') {
        const extra = Object.entries(o)
          .filter(([k]) => !['level', 'ts', 'caller', 'msg', 'stacktrace', 'logger', 'args', 'error'].includes(k))
          .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
        const level = String(o.level);
        const text = [o.msg, typeof o.error === 'string' ? o.error : undefined].filter(Boolean).join(': ') + (extra.length ? ` (${extra.join(', ')})` : '');
        return {
          level: level === 'fatal' || level === 'panic' || level === 'dpanic' ? 'fatal' : level === 'error' ? 'error' : level === 'warn' ? 'warn' : 'info',
          text,
        };
      }
    } catch {
      /* not JSON after all */
    }
  }
  const capns = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)? ([CEWNIDT]) \| (.*)$/.exec(line);
  if (capns) return { level: CAPNS_LEVEL[capns[1]!] ?? 'other', text: capns[2]!.trim() };
  return { level: 'other', text: line };
}

const WORDS =
  /flag provided but not defined|invalid value|invalid argument|error|cannot|can't|conflicting|removed|not supported|unknown|failed|no such file|permission denied|must be/i;

/** The line of the log that says why the member stopped ("" when it said nothing). */
export function exitMessage(log: string): string {
  const lines = log
    .split('\n')
    .map(readLine)
    .filter((l): l is LogLine => Boolean(l));
  // Go's usage text follows a flag error: indented lines and "Usage:" say nothing of the cause.
  const meaningful = lines.filter((l) => !/^(usage|Usage:|etcd |\s)/.test(l.text) && !/^-{1,2}[a-z]/.test(l.text));
  const pick =
    meaningful.find((l) => l.level === 'fatal') ??
    meaningful.find((l) => l.level === 'error') ??
    meaningful.find((l) => l.level === 'other' && WORDS.test(l.text)) ??
    meaningful.find((l) => l.level === 'warn' && WORDS.test(l.text)) ??
    meaningful.at(-1);
  return (pick?.text ?? '').slice(0, 400);
}

/** The member's settings the message names (a flag -key/--key, a variable ETCD_KEY, a config key), each where it is set. */
export function blamed(message: string, settings: readonly Setting[]): Setting[] {
  const named = new Set<string>();
  for (const m of message.matchAll(/(?:^|[\s"'(=,])--?([a-z][a-z0-9-]*[a-z0-9])/g)) named.add(m[1]!);
  for (const m of message.matchAll(/\bETCD_[A-Z0-9_]+/g)) {
    const k = envKey(m[0]);
    if (k) named.add(k);
  }
  for (const m of message.matchAll(/configYAML\.([a-z][a-z0-9-]*)/g)) named.add(m[1]!);
  for (const m of message.matchAll(/"([a-z][a-z0-9-]*[a-z0-9])"/g)) named.add(m[1]!);
  return settings.filter((s) => named.has(s.key));
}

/** A blamed setting as the refusal names it: the key, its value (secrets hidden) and where it is set. */
export function describeSetting(s: Setting): string {
  return `${s.key}${s.value === true ? '' : ` = ${shownValue(s.key, s.value)}`} (${s.from})`;
}

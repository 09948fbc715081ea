/**
 * A data-dir copy a backup template made on a member's host, measured there: where the copy is (the
 * template's own words say it: the destination holds {run}), and what it takes on disk as `du` counts
 * it, through the driver's host shell (`sh -s` here for a member on this machine, else the trial template
 * such as `ssh {host} sudo sh -s`). Where the path cannot be told or the host cannot be reached, the size
 * is "not known" with why, never a guess.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { CopySize, HostShellResult } from './driver.js';
import { shellWord } from './host-script.js';
import { displayArgv } from '../templates/argv.js';

/**
 * The words a POSIX shell would split `s` into (quotes removed; no expansion), for a script passed as one
 * argument; a redirection's target (`>log`, `2>> log`) is not a word of the command and is left out.
 */
export function shellWords(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let redirect = false;
  const end = () => {
    if (has && !redirect) out.push(cur);
    if (has) redirect = false;
    cur = '';
    has = false;
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "'") {
      const close = s.indexOf("'", i + 1);
      cur += s.slice(i + 1, close < 0 ? s.length : close);
      has = true;
      i = close < 0 ? s.length : close;
    } else if (c === '"') {
      has = true;
      for (i++; i < s.length && s[i] !== '"'; i++) cur += s[i] === '\\' && /["\\$`]/.test(s[i + 1] ?? '') ? s[++i]! : s[i]!;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i]!;
      has = true;
    } else if (c === '<' || c === '>') {
      // (a file descriptor's number before it, `2>`, is part of the operator)
      if (/^\d+$/.test(cur) && has) has = false;
      end();
      while (/[<>&|]/.test(s[i + 1] ?? '')) i++;
      redirect = true;
    } else if (/[\s;&|()]/.test(c)) end();
    else {
      cur += c;
      has = true;
    }
  }
  end();
  return out;
}

/**
 * Where a backup template's copy lands, from its argv as the run rendered it with `run`: the last
 * absolute path among its words (each argument, and the words of an argument that is a script: `sh -c
 * '…'`, ssh's remote line) that holds the {run} value. Undefined when none does (the copy's path is not
 * in the template's words: a script on the host that names it itself).
 */
export function copyPathOf(argv: readonly string[], run: string): string | undefined {
  const words = argv.flatMap((a) => (/[\s'"]/.test(a) ? shellWords(a) : [a]));
  return words.filter((w) => w.startsWith('/') && w.includes(run)).pop();
}

/** The script that measures `path` on its host: GNU du's bytes, else POSIX du's KiB; `none` when it is not there. */
export function copySizeScript(path: string): string {
  const p = shellWord(path);
  return [
    `p=${p}`,
    'if [ ! -e "$p" ]; then echo "opsctl-size: none"; exit 0; fi',
    'b=$(du -sB1 -- "$p" 2>/dev/null | cut -f1)',
    'if [ -n "$b" ]; then echo "opsctl-size: bytes $b"; exit 0; fi',
    'k=$(du -sk -- "$p" | cut -f1)',
    '[ -n "$k" ] && echo "opsctl-size: kib $k"',
    '',
  ].join('\n');
}

/** What the size script printed, read. */
export function parseCopySize(r: HostShellResult, path: string, host: string): CopySize {
  if (r.failed) return { why: `${host} not reached: ${r.failed}` };
  const line = /^opsctl-size: (.*)$/m.exec(r.stdout)?.[1]?.trim();
  if (line === 'none') return { why: `${path} is not on ${host} (removed there, or the backup template wrote elsewhere)` };
  const b = /^bytes (\d+)$/.exec(line ?? '');
  if (b) return { bytes: Number(b[1]) };
  const k = /^kib (\d+)$/.exec(line ?? '');
  if (k) return { bytes: Number(k[1]) * 1024 };
  const err = r.stderr.trim().split('\n').pop();
  return { why: `du of ${path} on ${host} printed no size${err ? `: ${err}` : r.exitCode ? ` (exit ${r.exitCode})` : ''}` };
}

/** What measuring needs of a driver: its host shell, and whether it reaches the member's host at all. */
export interface CopyMeasure {
  hostShell?(m: MemberSpec, script: string, timeoutMs: number): Promise<HostShellResult>;
}

/**
 * The copy the backup template made under `run`, measured on the member's host (`argv`: the template as it
 * ran for that {run}). Never throws: what cannot be measured says why.
 */
export async function measureHostCopy(
  driver: CopyMeasure,
  m: MemberSpec,
  argv: readonly string[],
  run: string,
  host: string,
  timeoutMs: number,
): Promise<CopySize & { path?: string }> {
  const path = copyPathOf(argv, run);
  if (!path)
    return {
      why: `the backup template (\`${displayArgv(argv)}\`) names no absolute path holding {run} ${run}: where its copy is cannot be told from here`,
    };
  if (!driver.hostShell) return { path, why: `the driver has no way onto ${host} to measure ${path}` };
  try {
    const r = await driver.hostShell(m, copySizeScript(path), timeoutMs);
    return { path, ...parseCopySize(r, path, host) };
  } catch (err) {
    return { path, why: `${host} not reached: ${(err as Error).message}` };
  }
}

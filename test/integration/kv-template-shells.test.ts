import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { renderTemplate, templateProblem } from '../../src/kv/templates/argv.js';
import { requireProgram } from '../helpers/e2e.js';
import { fakeSshScript } from '../helpers/fake-ssh.js';
import { seeded } from '../helpers/fuzz.js';

/**
 * The differential fuzz of the template grammar (issue 58): opsctl's reading of a command line (which
 * word a shell or wrapper runs as a script, by its own options) against the real programs' reading.
 * Every accepted invocation form, drawn at random from each shell's and wrapper's option grammar (sh,
 * bash, dash, zsh, ksh, mksh, busybox sh, su, runuser, sudo, env, nice, timeout, setsid, nohup, and ssh
 * through a stand-in that runs its remote line with sh -c, as sshd does), is rendered with hostile values
 * in every placeholder and RUN: no payload may run (each touches a marker file), and the program the
 * script means to run must get exactly the intended argv (the shell read the script where opsctl did).
 * The forms opsctl cannot read are refused when the template is read. (Before this grammar, `bash -o
 * pipefail -c` was not read as a shell with a script, and a value landed in its script raw.)
 */
const SHELLS = ['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'busybox', 'sudo', 'su', 'runuser', 'env', 'nice', 'timeout', 'setsid', 'nohup'];
const have = SHELLS.every((p) => requireProgram(`${p} (the template shell fuzz)`, p === 'runuser' ? '/usr/sbin/runuser' : `/usr/bin/${p}`));
const root = process.getuid?.() === 0;

const T = mkdtempSync(join(tmpdir(), 'opsctl-tpl-shells-'));
const BIN = join(T, 'bin');
const LOG = join(T, 'log');
const M = join(T, 'm');
for (const d of [BIN, LOG, M]) mkdirSync(d);
afterAll(() => rmSync(T, { recursive: true, force: true }));
// The stand-in program logs its argv to a file named by the time: its paths are baked in (sudo, su and env -i clear the environment).
const REC = join(BIN, 'rec');
writeFileSync(REC, `#!/bin/sh\nf="${LOG}/$(date +%s%N).$$"\n{ for a in "$@"; do printf '%s\\0' "$a"; done; } >"$f"\n`);
writeFileSync(join(BIN, 'ssh'), fakeSshScript('kv-template-shells', ':'));
for (const f of ['rec', 'ssh']) chmodSync(join(BIN, f), 0o755);
const env = { PATH: `${BIN}:/usr/bin:/bin:/usr/sbin:/sbin`, HOME: T };

beforeEach(() => {
  for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
});

const rng = seeded(5858);
const PAYLOADS = [
  `$(touch ${M}/a)`,
  `\`touch ${M}/b\``,
  `x; touch ${M}/c`,
  `x | touch ${M}/d`,
  `x && touch ${M}/e`,
  `x\ntouch ${M}/f`,
  `'; touch ${M}/g; '`,
  `"; touch ${M}/h; "`,
  `x' "$(touch ${M}/j)" '`,
  `\\'; touch ${M}/k #`,
  `DIR/ev;touch\${IFS}${M}/l;:`,
  `-c touch ${M}/m`,
  `-oProxyCommand=touch ${M}/n`,
  `$(IFS=,;touch\${IFS}${M}/o)`,
  `*`,
  `~root`,
  `{a,b}`,
  `a=b`,
  `=ls`,
];
const random = (i: number): string => {
  let s = '';
  for (let k = 0; k < 4; k++) s += String.fromCharCode(1 + rng.int(255));
  return `${s}${PAYLOADS[i % PAYLOADS.length]}`;
};
const HOSTILE = [...PAYLOADS, ...Array.from({ length: 6 }, (_, i) => random(i))];

/** What ran: the argv of every stand-in run, in order. */
function ran(): string[][] {
  const files = readdirSync(LOG).sort((a, b) => (BigInt(a.split('.')[0]!) < BigInt(b.split('.')[0]!) ? -1 : 1));
  return files.map((f) => readFileSync(join(LOG, f)).toString('utf8').split('\0').slice(0, -1));
}
const markers = () => readdirSync(M);

/** The script every form runs: two commands, the value as an argument of each (alone, and inside a word). */
const SCRIPT = `${REC} one {name} && ${REC} two x{bin}y`;
const meant = (v: string) => [
  ['one', v],
  ['two', `x${v}y`],
];

/** Each shell's option words that run the script as it is (no -n, -t, -i, -s, -r), and which take -o names. */
const SHELL_OPTIONS: Record<string, { letters: string; o: string[]; more: string[][]; long?: string[][] }> = {
  sh: { letters: 'aefuvxC', o: ['errexit', 'nounset', 'noglob'], more: [] },
  dash: { letters: 'aefuvxC', o: ['errexit', 'nounset', 'noglob'], more: [] },
  bash: {
    letters: 'aefhuvxCBEHPT',
    o: ['errexit', 'nounset', 'pipefail', 'noglob', 'posix'],
    more: [
      ['-O', 'extglob'],
      ['+O', 'extglob'],
    ],
    long: [['--norc'], ['--noprofile'], ['--rcfile', '/dev/null'], ['--posix']],
  },
  zsh: { letters: 'aefhuvxCBEHF', o: ['errexit', 'nounset', 'pipefail', 'noglob'], more: [] },
  ksh: { letters: 'aefhuvxCB', o: ['errexit', 'nounset', 'pipefail', 'noglob'], more: [] },
  mksh: { letters: 'aefhuvxCU', o: ['errexit', 'nounset', 'pipefail', 'noglob'], more: [] },
  'busybox sh': { letters: 'aefuvxC', o: ['errexit', 'nounset', 'pipefail', 'noglob'], more: [] },
};

/** A shell's invocation with random options around -c (before it, after it, in a cluster with it), as words of a template. */
function shellForm(shell: string): string {
  const g = SHELL_OPTIONS[shell]!;
  const words: string[] = [];
  const n = rng.int(4);
  for (let i = 0; i < n; i++) {
    const r = rng.int(4);
    if (r === 0) words.push(`${rng.pick(['-', '+'])}o`, rng.pick(g.o));
    else if (r === 1 && g.more.length) words.push(...rng.pick(g.more));
    else words.push(`-${Array.from({ length: 1 + rng.int(3) }, () => g.letters[rng.int(g.letters.length)]).join('')}`);
  }
  // -c: a word of its own, or the last letter of a cluster, anywhere among the options
  const c = rng.int(3);
  // (never between -o and its name)
  const places = Array.from({ length: words.length + 1 }, (_, i) => i).filter((i) => !/^[-+][oO]$|^--rcfile$/.test(words[i - 1] ?? ''));
  const at = rng.pick(places);
  const clusterAt = words.findIndex((w) => /^-[a-zA-Z]+$/.test(w) && !/[oO]/.test(w));
  if (c === 0 && clusterAt >= 0) words[clusterAt] = `${words[clusterAt]}c`;
  else words.splice(at, 0, '-c');
  // bash reads its long options only before its single-letter ones
  const fixed = [...(g.long && rng.int(2) ? rng.pick(g.long) : []), ...words];
  if (rng.int(4) === 0) fixed.push('--');
  return `${shell} ${fixed.join(' ')} "${SCRIPT}"${rng.int(3) === 0 ? ` ${shell.split(' ')[0]} {name} {bin}` : ''}`;
}

/** A wrapper chain before the shell, from each wrapper's own grammar. */
function wrapperChain(): string {
  const chain: string[] = [];
  for (let i = rng.int(4); i > 0; i--) {
    chain.push(
      rng.pick([
        'env',
        'env FOO=1',
        'env -i PATH=/usr/bin:/bin',
        'env -u HOME',
        'env - PATH=/usr/bin:/bin',
        'sudo',
        'sudo -n',
        'sudo -u root',
        'sudo -E',
        'sudo -u root --',
        'sudo -n FOO=bar',
        'nice',
        'nice -n 5',
        'nice -5',
        'nice --adjustment=1',
        'timeout 60',
        'timeout -k 5 60',
        'timeout --foreground 60',
        'timeout -s TERM 60',
        'setsid',
        'setsid -w',
        'nohup',
        'busybox env',
        'busybox timeout 60',
      ]),
    );
  }
  return chain.join(' ');
}

/** Renders a template with one value everywhere and runs it; returns why it failed, or undefined. */
async function tryForm(template: string, value: string): Promise<string | undefined> {
  for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
  const argv = renderTemplate(template, { host: 'h1', name: value, bin: value, version: value, endpoint: value });
  const r = await execa(argv[0]!, argv.slice(1), { env, extendEnv: false, reject: false, stdin: 'ignore', cwd: T });
  const got = ran();
  if (markers().length) {
    const m = markers();
    for (const f of m) rmSync(join(M, f));
    return `ran an injected command (markers ${m.join(',')})`;
  }
  if (JSON.stringify(got) !== JSON.stringify(meant(value))) return `ran ${JSON.stringify(got)} (exit ${r.exitCode}: ${String(r.stderr).slice(0, 300)})`;
  return undefined;
}

describe.runIf(have && root)('the template grammar against the real shells and wrappers: hostile values in every accepted form', () => {
  it('every shell, its options drawn at random around -c (200 forms × the hostile values): nothing injected, the script run as read', async () => {
    const forms: string[] = [];
    for (let i = 0; i < 200; i++) forms.push(`${wrapperChain()} ${shellForm(rng.pick(Object.keys(SHELL_OPTIONS)))}`.trim());
    const failures: string[] = [];
    let runs = 0;
    for (const form of forms) {
      const problem = templateProblem(form);
      if (problem) {
        failures.push(`${form}: refused (${problem})`);
        continue;
      }
      // each form with a few of the values (every value meets every shell across the forms)
      for (let k = 0; k < 4; k++) {
        const value = HOSTILE[(forms.indexOf(form) * 4 + k) % HOSTILE.length]!;
        const why = await tryForm(form, value);
        runs++;
        if (why) failures.push(`${form} with ${JSON.stringify(value)}: ${why}`);
      }
    }
    console.log(`template shell fuzz: ${forms.length} forms, ${runs} runs`);
    expect(failures).toEqual([]);
  }, 600_000);

  it('su, runuser, and ssh (its remote line through sh -c): each form × every hostile value', async () => {
    const forms = [
      `su root -c "${SCRIPT}"`,
      `su -c "${SCRIPT}" root`,
      `su - root -c "${SCRIPT}"`,
      `su -s /bin/sh -c "${SCRIPT}" root`,
      `su --shell=/bin/bash root --command "${SCRIPT}"`,
      `runuser root -c "${SCRIPT}"`,
      `runuser -u root -- bash -o pipefail -c "${SCRIPT}"`,
      `sudo -u root su root -c "${SCRIPT}"`,
      `ssh {host} bash -o pipefail -c "${SCRIPT}"`,
      `ssh -l root {host} sudo -u root env FOO=1 bash -eo pipefail -c "${SCRIPT}"`,
      `ssh {host} "${SCRIPT}"`,
      `ssh {host} ${REC} one {name} && ${REC} two x{bin}y`,
      `ssh {host} timeout 60 sh -c "${SCRIPT}"`,
      `ssh -o ConnectTimeout=3 -- {host} busybox sh -ec "${SCRIPT}"`,
    ];
    const failures: string[] = [];
    for (const form of forms) {
      const problem = templateProblem(form);
      if (problem) {
        failures.push(`${form}: refused (${problem})`);
        continue;
      }
      for (const value of HOSTILE) {
        const why = await tryForm(form, value);
        if (why) failures.push(`${form} with ${JSON.stringify(value)}: ${why}`);
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);

  it('the forms opsctl cannot read are refused when read, naming the value and the program', () => {
    const refused: Array<[string, RegExp]> = [
      [`bash -oc pipefail "${SCRIPT}"`, /-oc: an option that takes an argument inside a cluster/],
      [`stdbuf -oL bash -c "${SCRIPT}"`, /stdbuf/],
      [`xargs -0 sh -c "${SCRIPT}"`, /xargs/],
      [`sudo -s ${REC} one {name}`, /-s or -i/],
      [`sudo -i ${REC} one {name}`, /-s or -i/],
      [`env -S "${REC} one {name}"`, /the option -S/],
      [`sh -c "bash -c ${REC}\\ {name}"`, /in a shell script/],
      [`sh -c "eval ${REC} one {name}"`, /eval/],
      [`sh -c "ssh h ${REC} one {name}"`, /a value after ssh inside a script/],
      [`sh -c "$SHELL -c {name}"`, /-c. with a value after it/],
      [`{bin} -c "${REC} one {name}"`, /a program named by a value/],
      [`sh -Z -c "${REC} one {name}"`, /the option -Z, which opsctl does not read/],
      [`bash --weird -c "${REC} one {name}"`, /the option --weird/],
      [`bash -o {name} -c "${REC} one"`, /a value as the argument of -o/],
      [`sh {name}`, /a value where an option may stand/],
      [`python3 -c "print({name})"`, /program text/],
      [`watch ${REC} one {name}`, /watch/],
      [`ssh -o {name} {host} true`, /ssh -o/],
      [`ssh {host} echo $(sh -c {name} )`, /shell syntax inside a word/],
      [`ssh {host} true;sh -c {name}`, /shell syntax inside a word/],
      [`su -c${REC} root {name}`, /give the argument of -c as the next word/],
    ];
    const missed = refused.filter(([t, why]) => !why.test(templateProblem(t) ?? '')).map(([t]) => `${t}: ${templateProblem(t) ?? 'accepted'}`);
    expect(missed).toEqual([]);
  }, 300_000);
});

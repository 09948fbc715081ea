/**
 * Which word of a command line a program runs as code: the option grammar of every shell and wrapper
 * a command template may use. argv.ts asks it for each simple command before any value is placed.
 *
 * A command is read the way the program itself reads its arguments: a wrapper (env, sudo, nice,
 * timeout, setsid, nohup, exec, command, builtin, `ip netns exec NAME`, `busybox APPLET`) is walked
 * option by option to the command it runs; a shell (sh, bash, dash, zsh, ksh, mksh, ash, hush) is read
 * by its own options, so that -c anywhere among them makes its first operand the script; the argument
 * of su's or runuser's -c is a script; ssh is handed back to argv.ts (its remote words are a shell line).
 *
 * Refused, with the option and the program named, wherever a value would land where opsctl cannot tell
 * whether it is read as code: an option a wrapper or shell has that is not in its table here, a value
 * where an option may stand (a value that starts with - would be one), an option letter that takes an
 * argument inside a cluster (`-oc`: shells disagree on which word it takes), sudo -s/-i and env -S (they
 * re-split the command), programs that run their arguments as code in ways not read here (eval, watch,
 * xargs, find -exec, an interpreter's program text), and a shell named after a program opsctl does not
 * know (`stdbuf -oL bash -c …`) or as a value (`{bin} -c …`).
 */

/** One word as the grammar sees it. */
export interface GrammarWord {
  /** Its literal text; undefined where it holds a value (or, in a script, an expansion). */
  readonly lit: string | undefined;
  /** The literal text before its first value ('' when it starts with one). */
  readonly lead: string;
  /** It holds a {placeholder}. */
  readonly ph: boolean;
}

/** How a simple command reads its words. */
export type Reading =
  /** Every word is one argument of a program that does not read it as code. */
  | { readonly kind: 'argv' }
  /** words[at] is a script for a POSIX shell (its values quoted for that shell); the other words are arguments. */
  | { readonly kind: 'script'; readonly at: number }
  /** words[at] is ssh: its options, its destination and its remote shell line (argv.ts). */
  | { readonly kind: 'ssh'; readonly at: number }
  /** A value would land where opsctl cannot tell whether it is read as code. */
  | { readonly kind: 'refuse'; readonly why: string };

const base = (s: string): string => s.slice(s.lastIndexOf('/') + 1);
const ARGV: Reading = { kind: 'argv' };

/** A shell's or wrapper's options: letters alone, letters that take the next word, long options (alone, with the next word). */
interface Grammar {
  readonly flags: string;
  readonly withArg: string;
  readonly long: readonly string[];
  readonly longWithArg: readonly string[];
  /** What a lone `-` is: the end of the options (shells), an option (env's -i, su's --login), else an operand. */
  readonly dash?: 'end' | 'flag';
  /** `+o opt` and `+x` are options too (shells). */
  readonly plus?: boolean;
  /** nice's old `-N` form. */
  readonly digits?: boolean;
}

const POSIX = 'abCefhimnuvxsc';
const shell = (flags: string, withArg = 'o', more: Partial<Grammar> = {}): Grammar => ({
  flags: POSIX + flags,
  withArg,
  long: [],
  longWithArg: [],
  dash: 'end',
  plus: true,
  ...more,
});
/** Each shell's invocation options (its manual; the differential fuzz runs every accepted form on the real shell). */
const SHELLS: ReadonlyMap<string, Grammar> = new Map([
  ['sh', shell('lEIVp')],
  ['dash', shell('lEIVp')],
  ['ash', shell('lEIVp')],
  ['hush', shell('l')],
  [
    'bash',
    shell('klprtBDEHPT', 'oO', {
      long: [
        '--norc',
        '--noprofile',
        '--login',
        '--posix',
        '--restricted',
        '--verbose',
        '--noediting',
        '--debugger',
        '--dump-strings',
        '--dump-po-strings',
        '--pretty-print',
        '--help',
        '--version',
      ],
      longWithArg: ['--rcfile', '--init-file'],
    }),
  ],
  ['ksh', shell('klprtBDEGH')],
  ['ksh93', shell('klprtBDEGH')],
  ['mksh', shell('klprtU', 'oT')],
  ['lksh', shell('klprtU', 'oT')],
  // zsh: nearly every letter is an option; -o takes a name.
  ['zsh', shell('dgjklpqrtwyzABDEFGHIJKLMNOPQRSTUVWXYZ0123456789')],
]);

/** Wrappers: options, then (after any operands) the command they run as argv. */
const WRAPPERS: ReadonlyMap<string, Grammar & { readonly operands?: number }> = new Map([
  ['nice', { flags: '', withArg: 'n', long: [], longWithArg: ['--adjustment'], digits: true }],
  ['timeout', { flags: 'v', withArg: 'ks', long: ['--foreground', '--preserve-status', '--verbose'], longWithArg: ['--kill-after', '--signal'], operands: 1 }],
  ['setsid', { flags: 'cfw', withArg: '', long: ['--ctty', '--fork', '--wait'], longWithArg: [] }],
  ['nohup', { flags: '', withArg: '', long: [], longWithArg: [] }],
  ['exec', { flags: 'cl', withArg: 'a', long: [], longWithArg: [] }],
  ['builtin', { flags: '', withArg: '', long: [], longWithArg: [] }],
  ['time', { flags: 'p', withArg: '', long: [], longWithArg: [] }],
]);

/** Programs that run their arguments as code in ways opsctl does not read: a value after them is refused. */
const REPARSERS = new Set([
  'eval',
  'watch',
  'xargs',
  'flock',
  'script',
  'parallel',
  'find',
  'doas',
  'setpriv',
  'unshare',
  'nsenter',
  'chroot',
  'stdbuf',
  'ionice',
  'chrt',
  'taskset',
  'systemd-run',
  'source',
  '.',
]);
const INTERPRETER = /^(python[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|php[0-9.]*|lua[0-9.]*|tclsh[0-9.]*|awk|gawk|mawk|nawk)$/;
/** Any name that, after a program opsctl does not know, may run the words after it as code. */
const reads = (name: string): boolean =>
  SHELLS.has(name) ||
  WRAPPERS.has(name) ||
  REPARSERS.has(name) ||
  INTERPRETER.test(name) ||
  ['ssh', 'su', 'runuser', 'sudo', 'env', 'busybox', 'command'].includes(name);

const valueFrom = (words: readonly GrammarWord[], i: number): boolean => words.slice(i).some((w) => w.ph);

function refuse(program: string, what: string): Reading {
  return {
    kind: 'refuse',
    why: `${what} (\`${program}\`): opsctl cannot tell whether the value is read as code there; give the value as a plain argument of the program that uses it, or as a word of a \`sh -c\` script`,
  };
}

/**
 * Reads one simple command (its words in order, from `at`): which word is a script, where ssh starts,
 * or why a value there cannot be told apart from code.
 */
export function readCommand(words: readonly GrammarWord[], at = 0): Reading {
  const w = words[at];
  if (!w) return ARGV;
  if (w.lit === undefined) return opaque(words, at);
  const name = base(w.lit);
  if (name === 'ssh') return { kind: 'ssh', at };
  const sh = SHELLS.get(name);
  if (sh) return readShell(words, at, name, sh);
  const wrapper = WRAPPERS.get(name);
  if (wrapper) {
    const i = options(words, at, name, wrapper);
    if (typeof i !== 'number') return i;
    const cmd = i + (wrapper.operands ?? 0);
    if (words.slice(i, cmd).some((x) => x.ph)) return refuse(name, 'a value before the command it runs');
    return readCommand(words, cmd);
  }
  switch (name) {
    case 'env':
      return readEnv(words, at);
    case 'sudo':
      return readSudo(words, at);
    case 'su':
    case 'runuser':
      return readSu(words, at, name);
    case 'command':
      // -v and -V only say what a name is.
      if (words.slice(at + 1).some((x) => x.lit === '-v' || x.lit === '-V')) return ARGV;
      return readCommand(words, words[at + 1]?.lit === '-p' ? at + 2 : at + 1);
    case 'busybox':
      if (!words[at + 1]) return ARGV;
      if (words[at + 1]!.ph) return refuse(name, 'a value as the applet');
      return readCommand(words, at + 1);
    case 'ip':
      // `ip netns exec NAME command…`: the command runs as argv in that namespace.
      if (words[at + 1]?.lit === 'netns' && words[at + 2]?.lit === 'exec' && words[at + 3] && !words[at + 3]!.lead.startsWith('-'))
        return readCommand(words, at + 4);
      return opaque(words, at);
    default:
      if (INTERPRETER.test(name)) return readInterpreter(words, at, name);
      if (REPARSERS.has(name))
        return valueFrom(words, at + 1) ? refuse(name, `a value after \`${name}\`, which runs its arguments as code in ways opsctl does not read`) : ARGV;
      return opaque(words, at);
  }
}

/**
 * A program opsctl does not know: its words are its arguments, unless a shell or a wrapper is named
 * after it with a value behind (`stdbuf -oL bash -c …`, `xargs sh -c …`). A program named by a value is
 * unknown too, and with `-c` and a value after it (`{bin} -c …`) refused: the value may name a shell.
 */
function opaque(words: readonly GrammarWord[], at: number): Reading {
  const named = words[at]!.lit === undefined;
  const program = named ? 'a program named by a value' : words[at]!.lit!;
  for (let i = at + 1; i < words.length; i++) {
    const w = words[i]!;
    if (w.lit !== undefined && reads(base(w.lit)) && valueFrom(words, i + 1))
      return refuse(program, `\`${w.lit}\` with a value after it, behind a program opsctl does not read`);
    if (named && w.lit !== undefined && /^-[A-Za-z]*c/.test(w.lit) && valueFrom(words, i + 1)) return refuse(program, `\`${w.lit}\` with a value after it`);
  }
  return ARGV;
}

/**
 * Walks a program's options up to its first operand (getopt with "+": it stops there) and returns
 * that index, or a refusal: an unknown option with a value anywhere after it, a value that is or
 * may be an option, a value as an option's argument, or an argument-taking letter inside a cluster.
 */
function options(words: readonly GrammarWord[], at: number, program: string, g: Grammar): number | Reading {
  for (let i = at + 1; i < words.length; i++) {
    const w = words[i]!;
    if (w.ph) {
      if (w.lead === '') return refuse(program, 'a value where an option may stand (a value that starts with - would be read as one; put -- before it)');
      if (/^[-+]/.test(w.lead)) return refuse(program, `a value inside the option ${w.lead}…`);
      return i;
    }
    const t = w.lit!;
    if (t === '--') return i + 1;
    if (t === '-') {
      if (g.dash === 'flag') continue;
      return g.dash === 'end' ? i + 1 : i;
    }
    if (!(t.startsWith('-') || (g.plus && t.startsWith('+')))) return i;
    const unknown = (): number | Reading => (valueFrom(words, i) ? refuse(program, `the option ${t}, which opsctl does not read`) : words.length);
    if (t.startsWith('--')) {
      const key = t.split('=', 1)[0]!;
      // bash reads its long options only before its single-letter ones (after them: "invalid option").
      if (g.plus && g.long.length && words.slice(at + 1, i).some((x) => /^[-+][^-]/.test(x.lit ?? ''))) return unknown();
      if (g.long.includes(t)) continue;
      if (!g.longWithArg.includes(key)) return unknown();
      if (!t.includes('=')) {
        if (words[i + 1]?.ph) return refuse(program, `a value as the argument of ${t}`);
        i++;
      }
      continue;
    }
    if (g.digits && /^-\d+$/.test(t)) continue;
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (g.withArg.includes(c)) {
        // `-o name`: the next word. `-n5`: the rest of this one. A shell's `-oc` is read differently by each shell.
        if (k === t.length - 1) {
          if (words[i + 1]?.ph) return refuse(program, `a value as the argument of ${t}`);
          i++;
        } else if (g.plus) return valueFrom(words, i) ? refuse(program, `${t}: an option that takes an argument inside a cluster of options`) : words.length;
        break;
      }
      if (!g.flags.includes(c)) return unknown();
    }
  }
  return words.length;
}

/** env [options] [NAME=VALUE…] COMMAND; -S splits a string into a command (refused with a value after it). */
function readEnv(words: readonly GrammarWord[], at: number): Reading {
  const i = options(words, at, 'env', {
    flags: 'i0v',
    withArg: 'uC',
    long: ['--ignore-environment', '--null', '--debug'],
    longWithArg: ['--unset', '--chdir'],
    dash: 'flag',
  });
  if (typeof i !== 'number') return i;
  return assignmentsThen(words, i, 'env');
}

/** NAME=VALUE words (a value after the '='), then the command. */
function assignmentsThen(words: readonly GrammarWord[], i: number, program: string): Reading {
  const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/;
  while (i < words.length && assignment.test(words[i]!.lit ?? words[i]!.lead)) i++;
  if (words[i]?.ph && words[i]!.lead === '') return refuse(program, 'a value where a NAME=VALUE or the command may stand');
  return readCommand(words, i);
}

const SUDO: Grammar = {
  flags: 'AbBEeHhiKklNnPSsVv',
  withArg: 'aCcDgpRrTtUu',
  long: [
    '--askpass',
    '--background',
    '--bell',
    '--preserve-env',
    '--edit',
    '--set-home',
    '--help',
    '--login',
    '--remove-timestamp',
    '--reset-timestamp',
    '--list',
    '--non-interactive',
    '--no-update',
    '--preserve-groups',
    '--stdin',
    '--shell',
    '--version',
    '--validate',
  ],
  longWithArg: [
    '--auth-type',
    '--close-from',
    '--chdir',
    '--group',
    '--login-class',
    '--prompt',
    '--chroot',
    '--role',
    '--type',
    '--command-timeout',
    '--other-user',
    '--user',
  ],
};

/** sudo [options] [NAME=VALUE…] COMMAND; -s/-i hand the command to a shell (refused with a value after them). */
function readSudo(words: readonly GrammarWord[], at: number): Reading {
  const i = options(words, at, 'sudo', SUDO);
  if (typeof i !== 'number') return i;
  // The letters of each option cluster up to its first argument-taking letter.
  const letters = words
    .slice(at + 1, i)
    .map((w) => w.lit!)
    .filter((t) => /^-[^-]/.test(t))
    .map((t) => t.slice(1).split(new RegExp(`[${SUDO.withArg}]`))[0]!)
    .join('');
  const long = words.slice(at + 1, i).map((w) => w.lit!);
  if (/[si]/.test(letters) || long.includes('--shell') || long.includes('--login'))
    return valueFrom(words, i) ? refuse('sudo', '-s or -i (sudo hands the command to a shell, escaped its own way)') : ARGV;
  if (/[elvkKV]/.test(letters) || long.some((t) => ['--edit', '--list', '--validate', '--version', '--help'].includes(t))) return ARGV;
  return assignmentsThen(words, i, 'sudo');
}

/** su/runuser [options] [-] [USER [ARG…]]: options anywhere (GNU getopt permutes); -c's argument is a script. */
function readSu(words: readonly GrammarWord[], at: number, program: string): Reading {
  let script: number | undefined;
  let user = false;
  for (let i = at + 1; i < words.length; i++) {
    const w = words[i]!;
    if (w.ph) {
      if (i === script) continue;
      // A value where an option may stand (getopt reads options anywhere): refused unless it starts with literal text.
      if (w.lead === '' || w.lead.startsWith('-')) return refuse(program, 'a value where an option may stand (su reads options anywhere)');
      continue;
    }
    const t = w.lit!;
    // runuser -u USER [--] COMMAND: the command runs as argv (no shell); su's words after -- are its user and the shell's arguments.
    if (user && (t === '--' || !t.startsWith('-'))) return readCommand(words, t === '--' ? i + 1 : i);
    if (t === '--') break;
    if (t === '-' || !t.startsWith('-') || i === script) continue;
    if (['--login', '--preserve-environment', '--pty', '--fast', '--help', '--version'].includes(t)) continue;
    const key = t.split('=', 1)[0]!;
    if (key === '--command' || key === '--session-command') {
      if (t.includes('=')) continue;
      script = i + 1;
      continue;
    }
    if (['--shell', '--group', '--supp-group', '--whitelist-environment', '--user'].includes(key)) {
      if (key === '--user' && program === 'runuser') user = true;
      if (!t.includes('=')) {
        if (words[i + 1]?.ph) return refuse(program, `a value as the argument of ${t}`);
        i++;
      }
      continue;
    }
    if (t.startsWith('--')) return valueFrom(words, at + 1) ? refuse(program, `the option ${t}, which opsctl does not read`) : ARGV;
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (c === 'c' || 'sgGwu'.includes(c)) {
        if (k !== t.length - 1) return valueFrom(words, at + 1) ? refuse(program, `${t}: give the argument of -${c} as the next word`) : ARGV;
        if (c === 'c') script = i + 1;
        else if (c === 'u' && program === 'runuser') {
          user = true;
          if (words[i + 1]?.ph) return refuse(program, 'a value as the argument of -u');
          i++;
        } else if (words[i + 1]?.ph) return refuse(program, `a value as the argument of -${c}`);
        else i++;
        break;
      }
      if (!'flmpPhV'.includes(c)) return valueFrom(words, at + 1) ? refuse(program, `the option ${t}, which opsctl does not read`) : ARGV;
    }
  }
  return script !== undefined && script < words.length ? { kind: 'script', at: script } : ARGV;
}

/** A shell: with -c among its options, its first operand is the script; the words after it are $0, $1, … */
function readShell(words: readonly GrammarWord[], at: number, program: string, g: Grammar): Reading {
  const i = options(words, at, program, g);
  if (typeof i !== 'number') return i;
  let dashC = false;
  const opts = words.slice(at + 1, i).map((w) => w.lit!);
  for (let k = 0; k < opts.length; k++) {
    const t = opts[k]!;
    if (t === '--' || t === '-') break;
    if (t.startsWith('--')) {
      if (g.longWithArg.includes(t)) k++;
      continue;
    }
    const letters = t.slice(1);
    const argAt = [...letters].findIndex((c) => g.withArg.includes(c));
    if (t.startsWith('-') && (argAt < 0 ? letters : letters.slice(0, argAt)).includes('c')) dashC = true;
    if (argAt >= 0) k++;
  }
  return dashC && i < words.length ? { kind: 'script', at: i } : ARGV;
}

/** An interpreter: its program text is an option's argument (-c, -e …) or its first operand; values only after that. */
function readInterpreter(words: readonly GrammarWord[], at: number, program: string): Reading {
  for (let i = at + 1; i < words.length; i++) {
    const w = words[i]!;
    if (w.ph) return refuse(program, 'a value among its options or as its program text');
    const t = w.lit!;
    if (t === '--') return words[i + 1]?.ph ? refuse(program, 'a value as its program') : ARGV;
    if (!t.startsWith('-') || t === '-') return ARGV;
    if (/^-[A-Za-z]*[ceEf]$/.test(t) || t === '--eval' || t === '--exec' || t === '--file')
      return words[i + 1]?.ph ? refuse(program, 'a value as its program text') : ARGV;
  }
  return ARGV;
}

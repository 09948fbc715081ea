/**
 * Command templates: parsed into argv once, each {placeholder} filling exactly one argument.
 *
 * The grammar (README, kv "Which cluster"): words are separated by blanks; '…' is literal; "…" is
 * literal except that \" and \\ stand for " and \; outside quotes, \c stands for c. There are no
 * expansions (no $VAR, no globs, no ~): no shell reads the template. {name} (letters, digits, _)
 * is a placeholder wherever it stands, quotes included; any other brace is literal.
 *
 * Where the template crosses a shell, values are quoted for that shell ({@link shellQuote}):
 * - `ssh [options] HOST words…`: ssh joins the words after HOST and the remote user's shell runs
 *   them. opsctl passes `--` before HOST; an unquoted word without a placeholder is passed as written
 *   (so `&&`, `|`, `>` chain on the host); a word with a placeholder or quotes is one argument there
 *   (quoted for the remote shell). A single quoted word after HOST is a shell script: the remote
 *   shell runs it, placeholders in it quoted.
 * - `sh -c "script"` (sh, bash, dash, zsh, ksh, mksh, ash; su -c): the script's placeholders are
 *   quoted for that shell, and the script is quoted again when it also crosses ssh.
 * In a script a placeholder must stand outside quotes, comments, here-documents, backquotes, ${…},
 * $((…)) and $'…', and not right after $ or \ (refused when the template is read): opsctl quotes
 * the value there. Remote shells must be POSIX-like (sh, bash, dash, zsh, ksh), not fish or csh.
 */

export class TemplateError extends Error {}

type Part = { lit: string } | { ph: string };
interface Word {
  parts: Part[];
  /** The word used quotes or a backslash (then it is one argument wherever it goes). */
  quoted: boolean;
}

/** A piece of a rendered argument: literal text, a value, or pieces quoted as one word for a shell. */
type Node = { k: 'lit'; s: string } | { k: 'ph'; name: string } | { k: 'q'; nodes: Node[] };

/** One argv element: its pieces, and whether it may pass verbatim into a shell line (a bare literal word). */
interface Arg {
  nodes: Node[];
  bare: boolean;
}

export interface Template {
  readonly source: string;
  readonly argv: readonly Arg[];
  /** Every placeholder the template uses. */
  readonly placeholders: ReadonlySet<string>;
}

/** Splits a template into words (the grammar above). */
function lex(src: string): Word[] {
  const words: Word[] = [];
  let parts: Part[] = [];
  let lit = '';
  let quoted = false;
  let inWord = false;
  let quote: '"' | "'" | undefined;
  const flush = () => {
    if (lit) parts.push({ lit });
    lit = '';
  };
  const end = () => {
    flush();
    if (inWord) words.push({ parts, quoted });
    parts = [];
    quoted = false;
    inWord = false;
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    if (/[\x00-\x08\x0b-\x1f\x7f]/.test(c)) throw new TemplateError(`a control character (0x${c.charCodeAt(0).toString(16)}) in the template`);
    const ph = c === '{' ? /^\{(\w+)\}/.exec(src.slice(i)) : null;
    if (ph) {
      flush();
      parts.push({ ph: ph[1]! });
      inWord = true;
      i += ph[0].length - 1;
    } else if (quote === "'") {
      if (c === "'") quote = undefined;
      else lit += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && (src[i + 1] === '"' || src[i + 1] === '\\')) lit += src[++i];
      else lit += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      quoted = inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= src.length) throw new TemplateError('a backslash at the end of the template');
      lit += src[++i];
      quoted = inWord = true;
    } else if (c === ' ' || c === '\t' || c === '\n') end();
    else {
      lit += c;
      inWord = true;
    }
  }
  if (quote) throw new TemplateError(`unbalanced quote (${quote}) in template: ${src}`);
  end();
  return words;
}

const isLiteral = (w: Word): boolean => w.parts.every((p) => 'lit' in p);
const litOf = (w: Word): string => w.parts.map((p) => ('lit' in p ? p.lit : `{${p.ph}}`)).join('');
const basename = (s: string): string => s.slice(s.lastIndexOf('/') + 1);
const plain = (w: Word): Node[] => w.parts.map((p) => ('lit' in p ? { k: 'lit', s: p.lit } : { k: 'ph', name: p.ph }));
/** A word read by a shell as a script: its placeholders quoted for that shell. */
const script = (w: Word): Node[] => w.parts.map((p) => ('lit' in p ? { k: 'lit', s: p.lit } : { k: 'q', nodes: [{ k: 'ph', name: p.ph }] }));

/** ssh's options that take an argument (OpenSSH 9: ssh -h). */
const SSH_ARG = new Set('BbcDEeFIiJLlmOoPpQRSWw');
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'su']);

/** Where ssh's destination is (the first word after its options), and whether `--` is already there. */
function sshDestination(words: Word[], at: number): { dest: number; dashes: boolean } | undefined {
  for (let i = at + 1; i < words.length; i++) {
    const w = words[i]!;
    const first = w.parts[0];
    const text = first && 'lit' in first ? first.lit : '';
    if (w.quoted || !text.startsWith('-') || text === '-') return { dest: i, dashes: false };
    if (text === '--') return i + 1 < words.length ? { dest: i + 1, dashes: true } : undefined;
    for (let k = 1; k < text.length; k++) {
      if (SSH_ARG.has(text[k]!)) {
        if (k === text.length - 1 && w.parts.length === 1) i++; // the argument is the next word
        break;
      }
    }
  }
  return undefined;
}

/** The index of the script word of `sh -c SCRIPT` (or `su -c`), if a shell with -c is among the words. */
function shellScript(words: Word[]): number | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!isLiteral(w) || !SHELLS.has(basename(litOf(w)))) continue;
    for (let j = i + 1; j < words.length; j++) {
      const o = words[j]!;
      if (!isLiteral(o)) break;
      const t = litOf(o);
      if (t === '--command' || (/^-[A-Za-z]+$/.test(t) && t.includes('c'))) return j + 1 < words.length ? j + 1 : undefined;
      if (!t.startsWith('-') || t === '--') break;
    }
  }
  return undefined;
}

/** Words run as argv (here, or by a remote shell as one command line's words). */
function compileWords(words: Word[]): Arg[] {
  // ssh is the program when it comes first, or after a wrapper (sudo, ip netns exec …) when its destination holds a placeholder
  // (`systemctl restart ssh && …` names a unit, not a host).
  const at = words.findIndex((w) => !w.quoted && isLiteral(w) && basename(litOf(w)) === 'ssh');
  const d = at >= 0 ? sshDestination(words, at) : undefined;
  if (d && (at === 0 || words[d.dest]!.parts.some((p) => 'ph' in p))) {
    const head = compileWords(words.slice(0, at)).concat(
      words.slice(at, d.dashes ? d.dest - 1 : d.dest).map((w) => ({ nodes: plain(w), bare: !w.quoted && isLiteral(w) })),
    );
    const dest: Arg[] = [
      { nodes: [{ k: 'lit', s: '--' }], bare: true },
      { nodes: plain(words[d.dest]!), bare: false },
    ];
    const remote = words.slice(d.dest + 1);
    // One quoted word: a script for the remote shell. Else words, each one argument there.
    const line: Node[][] =
      remote.length === 1 && remote[0]!.quoted ? [script(remote[0]!)] : compileWords(remote).map((a) => (a.bare ? a.nodes : [{ k: 'q', nodes: a.nodes }]));
    const space: Node = { k: 'lit', s: ' ' };
    checkScript(line.flatMap((n, i) => (i ? [space, ...n] : n)));
    return [...head, ...dest, ...line.map((nodes) => ({ nodes, bare: false }))];
  }
  const s = shellScript(words);
  return words.map((w, i) => {
    if (i !== s) return { nodes: plain(w), bare: !w.quoted && isLiteral(w) };
    const nodes = script(w);
    checkScript(nodes);
    return { nodes, bare: false };
  });
}

/**
 * Refuses a script where a quoted value would not be one plain word: inside quotes, a comment, a
 * here-document, backquotes, ${…}, $((…)), $'…', or right after $ or \. Tracks quotes and $(…)
 * nesting exactly; after any construct it does not track, every later value is refused.
 */
function checkScript(nodes: Node[]): void {
  type Mode = 'bare' | 'sq' | 'dq' | 'comment';
  // One frame per $( … ): its mode, and its parenthesis depth.
  const frames: Array<{ mode: Mode; depth: number }> = [{ mode: 'bare', depth: 0 }];
  let esc = false;
  let poisoned: string | undefined;
  let wordStart = true;
  let prev = '';
  const where = (): string | undefined => {
    const f = frames[frames.length - 1]!;
    if (poisoned) return `after ${poisoned}`;
    if (f.mode === 'sq') return "inside '…'";
    if (f.mode === 'dq' || frames.slice(0, -1).some((x) => x.mode === 'dq')) return 'inside "…"';
    if (f.mode === 'comment') return 'inside a # comment';
    if (esc) return 'right after \\';
    if (prev === '$') return 'right after $';
    return undefined;
  };
  for (const n of nodes) {
    if (n.k !== 'lit') {
      const bad = where();
      if (bad) {
        const name = n.k === 'ph' ? n.name : (n.nodes.find((x) => x.k === 'ph') as { name: string } | undefined)?.name;
        throw new TemplateError(
          `{${name ?? '?'}} stands ${bad} in a shell script: put it outside quotes (opsctl quotes the value for the shell), or pass it as an argument`,
        );
      }
      prev = 'x';
      wordStart = false;
      continue;
    }
    const s = n.s;
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!;
      const f = frames[frames.length - 1]!;
      const next = s[i + 1];
      if (esc) {
        esc = false;
        prev = 'x';
        wordStart = false;
        continue;
      }
      if (f.mode === 'comment') {
        if (c === '\n') f.mode = 'bare';
        prev = c;
        wordStart = true;
        continue;
      }
      if (f.mode === 'sq') {
        if (c === "'") f.mode = 'bare';
        prev = c;
        continue;
      }
      if (c === '\\') {
        esc = true;
        continue;
      }
      if (c === '`') poisoned ??= 'a backquote';
      if (c === '$' && (next === '{' || next === "'" || next === '"')) poisoned ??= `$${next}`;
      if (c === '$' && next === '(' && s[i + 2] === '(') poisoned ??= '$((';
      if (c === '$' && next === '(') {
        frames.push({ mode: 'bare', depth: 0 });
        i++;
        prev = '(';
        wordStart = true;
        continue;
      }
      if (f.mode === 'dq') {
        if (c === '"') f.mode = 'bare';
        prev = c;
        continue;
      }
      // bare
      if (c === "'") f.mode = 'sq';
      else if (c === '"') f.mode = 'dq';
      else if (c === '#' && wordStart) f.mode = 'comment';
      else if (c === '<' && next === '<') poisoned ??= 'a here-document (<<)';
      else if (c === '(') f.depth++;
      else if (c === ')') {
        if (f.depth > 0) f.depth--;
        else if (frames.length > 1) frames.pop();
      }
      wordStart = /[\s;&|()<>]/.test(c);
      prev = c;
    }
  }
}

/** Parses and checks a template once; {@link renderArgv} fills it. */
export function compileTemplate(source: string): Template {
  const words = lex(source);
  const placeholders = new Set<string>();
  for (const w of words) for (const p of w.parts) if ('ph' in p) placeholders.add(p.ph);
  return { source, argv: compileWords(words), placeholders };
}

/**
 * A value quoted for a POSIX shell (sh, bash, dash, zsh, ksh): as it is when every character is
 * plainly safe (and it cannot be an assignment or zsh's =cmd), else in single quotes with each ' written '\''. The one quoting function.
 */
export function shellQuote(s: string): string {
  // Not bare: "," (brace expansion beside a literal {…}), a leading "=" (zsh's =cmd), NAME=… (an assignment in command position).
  if (/^[A-Za-z0-9_@%+=:./-]+$/.test(s) && !s.startsWith('=') && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function renderNodes(nodes: readonly Node[], value: (name: string) => string): string {
  let out = '';
  for (const n of nodes) out += n.k === 'lit' ? n.s : n.k === 'ph' ? value(n.name) : shellQuote(renderNodes(n.nodes, value));
  return out;
}

/** The argv of a template with its values; `value` throws for a missing or invalid one. */
export function renderArgv(t: Template, value: (name: string) => string): string[] {
  return t.argv.map((a) => renderNodes(a.nodes, value));
}

/** An argv for display (an error, --dry-run): a line a POSIX shell would run as the same argv. */
export function displayArgv(argv: readonly string[]): string {
  return argv.map((s) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : shellQuote(s))).join(' ');
}

/* The templates' vocabulary: the placeholders each template may use, and a template checked or rendered on its own. */

/** A template's argv with its values (the grammar and the quoting: argv.ts). No value is checked here: {@link CommandDriver} does. */
export function renderTemplate(template: string, vars: Record<string, string | undefined>): string[] {
  return renderArgv(compileTemplate(template), (k) => {
    const v = vars[k];
    if (v === undefined) throw new TemplateError(`template ${template}: no value for {${k}}`);
    return v;
  });
}

/** The placeholders every template may use; the backup template also has {run}. */
export const TEMPLATE_VARS = ['host', 'name', 'endpoint', 'version', 'bin'] as const;

/** The placeholders a template has beyond the common ones, by template name (file key or flag stem). */
export const TEMPLATE_EXTRA: Readonly<Record<string, readonly string[]>> = {
  backup: ['run'],
  restore: ['snapshot', 'peer', 'cluster', 'token', 'run'],
  restoreBackup: ['run'],
  'restore-backup': ['run'],
  dropBackup: ['run'],
  'drop-backup': ['run'],
  restoreCheck: ['snapshot', 'peer', 'cluster', 'token', 'run'],
  'restore-check': ['snapshot', 'peer', 'cluster', 'token', 'run'],
};

/**
 * What is wrong with a template before anything runs (an unknown {placeholder}, an unbalanced
 * quote, a placeholder where a shell would not read it as one word), or undefined.
 * `extra`: placeholders this template has besides TEMPLATE_VARS.
 */
export function templateProblem(template: string, extra: readonly string[] = []): string | undefined {
  const known = new Set<string>([...TEMPLATE_VARS, ...extra]);
  let t;
  try {
    t = compileTemplate(template);
  } catch (err) {
    if (err instanceof TemplateError) return err.message;
    throw err;
  }
  const unknown = [...t.placeholders].find((k) => !known.has(k));
  if (unknown) return `unknown placeholder {${unknown}} (known: ${[...known].map((k) => `{${k}}`).join(', ')})`;
  return undefined;
}

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

import { readCommand, type GrammarWord } from './command-grammar.js';
import { checkScript, checkScriptCommands, TemplateError, type Node } from './shell-script.js';

export { TemplateError };

type Part = { lit: string } | { ph: string };
interface Word {
  parts: Part[];
  /** The word used quotes or a backslash (then it is one argument wherever it goes). */
  quoted: boolean;
}

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
const plain = (w: Word): Node[] => w.parts.map((p) => ('lit' in p ? { k: 'lit', s: p.lit } : { k: 'ph', name: p.ph }));
/** A word read by a shell as a script: its placeholders quoted for that shell. */
const script = (w: Word): Node[] => w.parts.map((p) => ('lit' in p ? { k: 'lit', s: p.lit } : { k: 'q', nodes: [{ k: 'ph', name: p.ph }] }));

/** ssh's options that take an argument (OpenSSH 9: ssh -h). */
const SSH_ARG = new Set('BbcDEeFIiJLlmOoPpQRSWw');

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
        if (k === text.length - 1 && w.parts.length === 1) {
          // -o's argument is ssh configuration (ProxyCommand, LocalCommand: code): never a value.
          if (text[k] === 'o' && words[i + 1] && !isLiteral(words[i + 1]!))
            throw new TemplateError('a value as the argument of ssh -o: ssh options such as ProxyCommand run code; write the option out');
          i++; // the argument is the next word
        }
        break;
      }
    }
  }
  return undefined;
}

/** A word as the command grammar sees it (command-grammar.ts). */
function grammarWord(w: Word): GrammarWord {
  const at = w.parts.findIndex((p) => 'ph' in p);
  return {
    lit: at < 0 ? litOf(w) : undefined,
    ph: at >= 0,
    lead: w.parts
      .slice(0, at < 0 ? undefined : at)
      .map((p) => ('lit' in p ? p.lit : ''))
      .join(''),
  };
}

const placeholdersOf = (words: readonly Word[]): string => {
  const names = [...new Set(words.flatMap((w) => w.parts.flatMap((p) => ('ph' in p ? [`{${p.ph}}`] : []))))];
  return names.join(', ') || 'a value';
};

/** One simple command, read by its program's own grammar: arguments, a shell script, or ssh and its remote line. */
function compileCommand(words: Word[]): Arg[] {
  const r = readCommand(words.map(grammarWord));
  if (r.kind === 'refuse') throw new TemplateError(`${placeholdersOf(words)}: ${r.why}`);
  if (r.kind === 'ssh') return compileSsh(words, r.at);
  return words.map((w, i) => {
    if (r.kind !== 'script' || i !== r.at) return { nodes: plain(w), bare: !w.quoted && isLiteral(w) };
    const nodes = script(w);
    checkScript(nodes);
    checkScriptCommands(nodes);
    return { nodes, bare: false };
  });
}

/** `ssh [options] DEST words…`: `--` before the destination; the words after it a line for the remote shell. */
function compileSsh(words: Word[], at: number): Arg[] {
  const d = sshDestination(words, at);
  if (!d) return words.map((w) => ({ nodes: plain(w), bare: !w.quoted && isLiteral(w) }));
  const head = words.slice(0, d.dashes ? d.dest - 1 : d.dest).map((w) => ({ nodes: plain(w), bare: !w.quoted && isLiteral(w) }));
  const dest: Arg[] = [
    { nodes: [{ k: 'lit', s: '--' }], bare: true },
    { nodes: plain(words[d.dest]!), bare: false },
  ];
  const remote = words.slice(d.dest + 1);
  // One quoted word: a script for the remote shell. Else words, each one argument there.
  let line: Node[][];
  if (remote.length === 1 && remote[0]!.quoted) {
    const nodes = script(remote[0]!);
    checkScriptCommands(nodes);
    line = [nodes];
  } else line = compileLine(remote).map((a) => (a.bare ? a.nodes : [{ k: 'q', nodes: a.nodes }]));
  const space: Node = { k: 'lit', s: ' ' };
  checkScript(line.flatMap((n, i) => (i ? [space, ...n] : n)));
  return [...head, ...dest, ...line.map((nodes) => ({ nodes, bare: false }))];
}

/** A control operator standing as a word of its own in a remote line: it ends one command there. */
const OPERATOR = /^(&&|\|\||;|\||&|\|&)$/;
/** A redirection standing as a word of its own (`>`, `2>&1`, `>/dev/null`). */
const REDIRECT = /^\d*(>>?|<|>&|<&|&>)([\w./-]*)$/;

/**
 * The words after ssh's destination: a line the remote shell parses. Its commands are split at the
 * operator words; each is read by its program's grammar. Other shell syntax inside a bare word
 * (`x;sh`, `$(sh`) hides a command from that reading: refused when a value follows it.
 */
function compileLine(words: Word[]): Arg[] {
  const out: Arg[] = [];
  let start = 0;
  for (let i = 0; i <= words.length; i++) {
    const w = words[i];
    const bare = w !== undefined && !w.quoted && isLiteral(w);
    const text = bare ? litOf(w) : '';
    if (w === undefined || (bare && OPERATOR.test(text))) {
      out.push(...compileCommand(words.slice(start, i)));
      if (w) out.push({ nodes: plain(w), bare: true });
      start = i + 1;
    } else if (bare && /[$`()|;&<>\n]/.test(text) && !REDIRECT.test(text) && words.slice(i + 1).some((x) => !isLiteral(x)))
      throw new TemplateError(
        `${placeholdersOf(words.slice(i + 1))} after \`${text}\` on the remote line: shell syntax inside a word hides which command reads the value; write operators as words of their own (\`a && b\`), or put the remote script in one quoted word`,
      );
  }
  return out;
}

/** Parses and checks a template once; {@link renderArgv} fills it. */
export function compileTemplate(source: string): Template {
  const words = lex(source);
  const placeholders = new Set<string>();
  for (const w of words) for (const p of w.parts) if ('ph' in p) placeholders.add(p.ph);
  return { source, argv: compileCommand(words), placeholders };
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

/** The placeholders every template may use; a template's own besides these are in its row (kv/cluster/cluster-file.ts DRIVER_TEMPLATES). */
export const TEMPLATE_VARS = ['host', 'name', 'endpoint', 'version', 'bin'] as const;

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

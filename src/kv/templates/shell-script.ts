/**
 * What a POSIX shell does with the values in a script: where a value quoted by opsctl stays one plain
 * word (outside quotes, comments, here-documents, backquotes, ${…}, $((…))), and which commands of the
 * script read it (a second shell, ssh, eval: refused). argv.ts places the values; this file reads scripts.
 */
import { readCommand, type GrammarWord } from './command-grammar.js';

export class TemplateError extends Error {}

/** A piece of a rendered argument: literal text, a value, or pieces quoted as one word for a shell. */
export type Node = { k: 'lit'; s: string } | { k: 'ph'; name: string } | { k: 'q'; nodes: Node[] };

/**
 * Refuses a script where a quoted value would not be one plain word: inside quotes, a comment, a
 * here-document, backquotes, ${…}, $((…)), $'…', or right after $ or \. Tracks quotes and $(…)
 * nesting exactly; after any construct it does not track, every later value is refused.
 */
export function checkScript(nodes: Node[]): void {
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

/** Words that open or close a compound command: not the program of the command they stand before. */
const RESERVED = new Set(['if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until', '!', '{', '}']);

/**
 * The simple commands of a shell script, each as the words the grammar reads (values quoted by opsctl
 * as one word; `$…` and `$(…)` make a word an expansion: its text unknown). `$(…)` and `(…)` are
 * commands of their own; redirections and their targets, leading assignments and reserved words are
 * left out; `for`, `case` and `select` headers are data.
 */
function scriptCommands(nodes: readonly Node[]): GrammarWord[][] {
  interface Frame {
    words: GrammarWord[];
    lit: string;
    lead: string;
    ph: boolean;
    dynamic: boolean;
    inWord: boolean;
    /** The next word is a redirection's target. */
    target: boolean;
  }
  const frame = (): Frame => ({ words: [], lit: '', lead: '', ph: false, dynamic: false, inWord: false, target: false });
  const stack: Frame[] = [frame()];
  const commands: GrammarWord[][] = [];
  let quote: "'" | '"' | undefined;
  const top = () => stack[stack.length - 1]!;
  const endWord = () => {
    const f = top();
    if (f.inWord) {
      if (f.target) f.target = false;
      else f.words.push({ lit: f.ph || f.dynamic ? undefined : f.lit, lead: f.ph ? f.lead : f.lit, ph: f.ph });
    }
    Object.assign(f, { lit: '', lead: '', ph: false, dynamic: false, inWord: false });
  };
  const endCommand = () => {
    endWord();
    const f = top();
    if (f.words.length) commands.push(f.words);
    f.words = [];
  };
  for (const n of nodes) {
    if (n.k !== 'lit') {
      const f = top();
      if (!f.ph) f.lead = f.lit;
      f.ph = f.inWord = true;
      continue;
    }
    const s = n.s;
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!;
      const f = top();
      if (quote === "'") {
        if (c === "'") quote = undefined;
        else f.lit += c;
        continue;
      }
      if (quote === '"') {
        if (c === '"') quote = undefined;
        else if (c === '\\') f.lit += s[++i] ?? '';
        else {
          if (c === '$' || c === '`') f.dynamic = true;
          f.lit += c;
        }
        continue;
      }
      if (c === '\\') {
        if (s[i + 1] === '\n') i++;
        else {
          f.lit += s[++i] ?? '';
          f.inWord = true;
        }
      } else if (c === "'" || c === '"') {
        quote = c;
        f.inWord = true;
      } else if (c === '$' && s[i + 1] === '(') {
        // $(…): a command of its own inside this word, whose text is then unknown.
        f.dynamic = f.inWord = true;
        stack.push(frame());
        i++;
      } else if (c === '(' || c === '`') {
        endCommand();
        stack.push(frame());
      } else if (c === ')') {
        endCommand();
        if (stack.length > 1) stack.pop();
      } else if (c === '$') {
        f.dynamic = f.inWord = true;
        f.lit += c;
      } else if (c === ';' || c === '&' || c === '|' || c === '\n') endCommand();
      else if (c === '<' || c === '>') {
        // A file descriptor's digits before it are not a word; the target follows (after any blanks).
        if (f.inWord && /^\d+$/.test(f.lit) && !f.ph && !f.dynamic) Object.assign(f, { lit: '', inWord: false });
        endWord();
        while (/[<>&|-]/.test(s[i + 1] ?? '')) i++;
        if (s[i] === '&' && /\d/.test(s[i + 1] ?? '')) while (/\d/.test(s[i + 1] ?? '')) i++;
        else top().target = true;
      } else if (c === ' ' || c === '\t') endWord();
      else if (c === '#' && !f.inWord) while (i + 1 < s.length && s[i + 1] !== '\n') i++;
      else {
        f.lit += c;
        f.inWord = true;
      }
    }
  }
  while (stack.length) {
    endCommand();
    stack.pop();
  }
  return commands.flatMap((words) => {
    let i = 0;
    for (;;) {
      const t = words[i]?.lit;
      if (t !== undefined && RESERVED.has(t)) i++;
      else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]?.lead ?? '')) i++;
      else break;
    }
    const rest = words.slice(i);
    return rest.length && !['for', 'case', 'select', 'function'].includes(rest[0]!.lit ?? '') ? [rest] : [];
  });
}

/**
 * Refuses a script in which a value would reach a second reader of code: a shell run by the script
 * (`sh -c "bash -c {x}"`), ssh's remote shell (`sh -c "ssh h rm {x}"`), eval and the like. opsctl
 * quotes a value for the one shell that runs the script.
 */
export function checkScriptCommands(nodes: readonly Node[]): void {
  for (const words of scriptCommands(nodes)) {
    const r = readCommand(words);
    const why =
      r.kind === 'refuse'
        ? r.why
        : r.kind === 'script' && words[r.at]!.ph
          ? 'a value inside the script of a shell that the script itself runs: opsctl quotes a value for one shell; pass it as an argument (`sh -c \'… "$1"\' sh {name}`)'
          : r.kind === 'ssh' && words.slice(r.at + 1).some((w) => w.ph)
            ? "a value after ssh inside a script: the remote shell would read it again; make ssh the template's own program (opsctl quotes for the remote shell)"
            : undefined;
    if (why) {
      const names = [...new Set(nodes.flatMap((n) => (n.k === 'q' ? n.nodes.flatMap((x) => (x.k === 'ph' ? [`{${x.name}}`] : [])) : [])))];
      throw new TemplateError(`${names.join(', ')} in a shell script: ${why}`);
    }
  }
}

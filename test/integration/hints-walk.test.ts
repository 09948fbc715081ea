import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/wiring/context.js';
import { buildProgram } from '../../src/program.js';
import { parseId } from '../../src/tracker/input.js';
import { RESOURCES } from '../../src/tracker/resources.js';
import { runCli } from '../helpers/cli.js';
import { tsFiles } from '../helpers/ts-files.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
/** The tracker's resource table: its help texts and examples are generated from resources.yaml into this file. */
const TABLE = fileURLToPath(new URL('../../packages/shared/src/tracker/resources.ts', import.meta.url));

/** Every `opsctl <words>` inside a string literal of src/ and the tracker's table (comments left out), with where it stands. */
function commandsInSource(): { where: string; words: string[] }[] {
  const found: { where: string; words: string[] }[] = [];
  for (const file of [...tsFiles(SRC), TABLE]) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const [i, line] of lines.entries()) {
      const code = line.trimStart();
      if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) continue;
      if (PROSE.some((p) => line.includes(p))) continue;
      for (const m of line.matchAll(/[`'"][^`'"]*?\bopsctl ((?:[a-z][\w-]*)(?: [^ `'"]+)*)/g)) {
        found.push({ where: `${relative(SRC, file)}:${i + 1}`, words: (m[1] ?? '').split(' ') });
      }
    }
  }
  return found;
}

/** Lines that name opsctl in prose, not as a command to run: `mock serve`'s banner ("opsctl mock listening on URL"). */
const PROSE = ['opsctl mock listening on'];

/** A word that stands for a value the reader fills in, not a command word. */
const placeholder = (w: string) => /[<[{$…]|^[A-Z_]+$|^-/.test(w) || w === '|';

/**
 * The command path a hint names, or the reason it names none: each word must be a subcommand of the level
 * reached until a leaf command (whose arguments follow) or a placeholder.
 */
function resolve(program: Command, words: string[]): { path: string[] } | { bad: string } | { prose: true } {
  const first = (words[0] ?? '').replace(/[),;.:]+$/, '');
  if (!program.commands.some((c) => c.name() === first)) {
    // prose ("opsctl keeps …"), unless the word is a near miss of a command: a typo in a hint
    const near = first.length >= 5 ? program.commands.find((c) => distance(c.name(), first) <= 2) : undefined;
    return near ? { bad: `"${first}" is not a command (did the hint mean ${near.name()}?)` } : { prose: true };
  }
  const path: string[] = [];
  let cmd = program;
  for (const raw of words) {
    const w = raw.replace(/[),;.:]+$/, '');
    if (!cmd.commands.length || placeholder(w)) break;
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (!sub) {
      // a command with its own arguments may also have subcommands (`help <topic>`): a word is then an argument
      if (cmd.registeredArguments.length && path.length) break;
      return { bad: `"${w}" is not a command of "opsctl ${path.join(' ')}"` };
    }
    path.push(sub.name());
    cmd = sub;
    if (w !== raw) break;
  }
  return { path };
}

/** Levenshtein distance (short words only). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (const [i, ca] of [...a].entries()) {
    const row = [i + 1];
    for (const [j, cb] of [...b].entries()) row.push(Math.min((prev[j + 1] ?? 0) + 1, (row[j] ?? 0) + 1, (prev[j] ?? 0) + (ca === cb ? 0 : 1)));
    prev = row;
  }
  return prev[b.length] ?? 0;
}

describe('every command a hint or message names exists', () => {
  it('walks every `opsctl …` string in src/ and runs its command --help', { timeout: 120_000 }, async () => {
    const program = await buildProgram(createContext({ env: { OPSCTL_CONFIG_DIR: '/nonexistent' } }));
    const found = commandsInSource();
    expect(found.length).toBeGreaterThan(100);
    const bad: string[] = [];
    const paths = new Map<string, string>();
    for (const { where, words } of found) {
      const r = resolve(program, words);
      if ('bad' in r) bad.push(`${where}: opsctl ${words.join(' ')}: ${r.bad}`);
      else if ('path' in r && r.path.length) paths.set(r.path.join(' '), where);
    }
    expect(bad).toEqual([]);
    for (const [path, where] of paths) {
      const r = await runCli([...path.split(' '), '--help']);
      expect({ where, path, code: r.code, usage: r.stdout.includes(`Usage: opsctl ${path}`) }).toEqual({ where, path, code: 0, usage: true });
    }
    expect(paths.size).toBeGreaterThan(30);
  });
});

describe('the id hints of every tracker resource', () => {
  it('name a command that exists (stories by title point at tracker search stories)', { timeout: 60_000 }, async () => {
    const program = await buildProgram(createContext({ env: { OPSCTL_CONFIG_DIR: '/nonexistent' } }));
    const bad: string[] = [];
    let stories = '';
    for (const spec of RESOURCES) {
      let hint = '';
      try {
        parseId(spec, 'Fix login');
      } catch (err) {
        hint = (err as { hint?: string }).hint ?? '';
      }
      const words = /opsctl (.*)$/.exec(hint)?.[1]?.split(' ') ?? [];
      const r = resolve(program, words);
      if (!('path' in r) || !r.path.length) bad.push(`${spec.name}: ${hint}`);
      if (spec.name === 'stories') stories = hint;
    }
    expect(bad).toEqual([]);
    expect(stories).toBe("find its id by text: opsctl tracker search stories --query 'Fix login'");
  });
});

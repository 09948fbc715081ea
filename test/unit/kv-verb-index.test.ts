import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KV_INDEX_FILE, kvIndexSource, verbsOf } from '../../scripts/kv-index.mjs';
import { namedVerb } from '../../src/commands/kv/index.js';
import { noun } from '../../src/commands/kv/noun.js';
import { NOUN_SUMMARIES } from '../../src/commands/nouns.js';
import { KV_INDEX, type KvGroupEntry, type KvVerbEntry } from '../../src/commands/kv/verb-index.js';
import { builtForLine, type VerbSpec } from '../../src/commands/spec.js';
import { buildProgram } from '../../src/program.js';
import { createContext } from '../../src/wiring/context.js';
import { runCli } from '../helpers/cli.js';

const ctx = () => createContext({ env: { OPSCTL_CONFIG_DIR: '/nonexistent', HOME: '/nonexistent', COLUMNS: '120' } });

/** The command at `words` under `cmd` (by name). */
function at(cmd: Command, words: readonly string[]): Command {
  let c = cmd;
  for (const w of words) c = c.commands.find((s) => s.name() === w)!;
  return c;
}

/** What `cmd`'s --help prints (its 'beforeHelp' listeners run: a lazy group completes its verbs for it). */
function helpOf(cmd: Command): string {
  let text = '';
  cmd.configureOutput({ writeOut: (s) => (text += s) });
  cmd.outputHelp();
  return text;
}

/** Every verb of the index by its command words. */
function indexVerbs(group: KvGroupEntry, words: string[] = []): Array<[string[], KvVerbEntry]> {
  return group.verbs.flatMap((e): Array<[string[], KvVerbEntry]> => ('verbs' in e ? indexVerbs(e, [...words, e.name]) : [[[...words, e.name], e]]));
}

describe("the kv noun's verb index (src/commands/kv/verb-index.ts, generated from noun.ts)", () => {
  it('is what npm run gen:kv-index writes from the noun (stale after a verb, a name or a summary changed: run it)', async () => {
    expect(readFileSync(KV_INDEX_FILE, 'utf8')).toBe(await kvIndexSource(noun, NOUN_SUMMARIES.kv));
  });

  it("loads each verb's own spec: the one the noun holds, in the same place", async () => {
    const fromNoun = verbsOf(noun) as Array<[string[], VerbSpec]>;
    const fromIndex = indexVerbs(KV_INDEX);
    expect(fromIndex.map(([w]) => w.join(' '))).toEqual(fromNoun.map(([w]) => w.join(' ')));
    expect(fromIndex).toHaveLength(39);
    for (const [[words, entry], [, spec]] of fromIndex.map((e, i) => [e, fromNoun[i]!] as const)) {
      const loaded = await entry.spec();
      expect(loaded.name, words.join(' ')).toBe(spec.name);
      expect(loaded.summary, words.join(' ')).toBe(spec.summary);
      expect(loaded.flags, words.join(' ')).toBe(spec.flags);
      expect(entry.name, words.join(' ')).toBe(spec.name);
      expect(entry.aliases, words.join(' ')).toEqual(spec.aliases);
    }
  });

  it('names the verb only when the words right after kv name it (commander then dispatches to it)', () => {
    const named = (argv: string[]) => {
      const n = namedVerb(argv);
      return n && [...n.groups.slice(1).map((g) => g.name), n.verb.name].join(' ');
    };
    expect(named(['kv', 'get', 'foo', '--endpoints', 'x'])).toBe('get');
    expect(named(['--json', 'kv', 'get', 'foo'])).toBe('get');
    expect(named(['kv', 'member', 'list'])).toBe('member list');
    expect(named(['kv', 'endpoint', 'health', '--cluster'])).toBe('endpoint health');
    // every other line builds the noun from every spec
    for (const argv of [
      ['kv'],
      ['kv', '--help'],
      ['kv', 'member'],
      ['kv', 'member', '--help'],
      ['kv', 'gte'],
      ['kv', '--endpoints', 'x', 'get', 'foo'],
      ['tracker'],
    ])
      expect(named(argv), argv.join(' ')).toBeUndefined();
  });
});

describe('a kv command line that names one verb builds that verb alone', () => {
  it('kv get: the kv command holds get alone, with its arguments and flags', async () => {
    const kv = at(await buildProgram(ctx(), ['kv', 'get', 'foo', '--prefix']), ['kv']);
    expect(kv.commands.map((c) => c.name())).toEqual(['get']);
    expect(at(kv, ['get']).options.map((o) => o.long)).toContain('--prefix');
    const member = at(await buildProgram(ctx(), ['kv', 'member', 'list']), ['kv']);
    expect(member.commands.map((c) => c.name())).toEqual(['member']);
    expect(at(member, ['member']).commands.map((c) => c.name())).toEqual(['list']);
  });

  it("every kv verb built alone has the help it has in the whole tree, and the noun's help is the whole tree's", async () => {
    // (the whole tree as `opsctl help …` builds it: a command line naming a command, so no top-level -V)
    const whole = await buildProgram(ctx(), ['help']);
    for (const [words] of verbsOf(noun)) {
      // (a line asking for the verb's help: the verb with every option, not only its line's)
      const alone = await buildProgram(ctx(), ['kv', ...words, '--help']);
      expect(helpOf(at(alone, ['kv', ...words])), words.join(' ')).toBe(helpOf(at(whole, ['kv', ...words])));
    }
    // (a line that names no verb: the noun from every spec, its help completing each verb as before)
    const noVerb = await buildProgram(ctx(), ['kv', '--help']);
    expect(helpOf(at(noVerb, ['kv']))).toBe(helpOf(at(whole, ['kv'])));
    expect(helpOf(at(noVerb, ['kv']))).toContain('get [options] <key> [range-end]');
  });
});

describe("a kv verb built for its command line has only the options that line can use (spec.ts addVerb's line)", () => {
  const longs = async (argv: string[], opts: { everyFlag?: boolean } = {}) => {
    const program = await buildProgram(ctx(), argv, opts);
    return { program, longs: at(program, ['kv', 'get']).options.map((o) => o.long) };
  };

  it('the flags the line spells (--name, --name=…, -x or a cluster holding x) and the ones that give a value unasked', async () => {
    const { program, longs: some } = await longs(['kv', 'get', 'foo', '--endpoints=http://h:2379', '-w', 'json']);
    expect(builtForLine(program)).toBe(true);
    expect(some).toContain('--endpoints');
    expect(some).toContain('--write-out');
    expect(some).not.toContain('--prefix');
    expect(some).not.toContain('--keys-only');
    const every = (await longs(['kv', 'get', 'foo'], { everyFlag: true })).longs;
    expect(some.length).toBeLessThan(every.length);
    // a default, a mandatory flag, a --no- flag and its pair: kept whether or not the line spells them
    const spec = await namedVerb(['kv', 'get'])!.verb.spec();
    for (const [key, flag] of Object.entries(spec.flags ?? {})) {
      const unasked =
        flag.type === 'negated' ||
        ('negate' in flag && flag.negate) ||
        ('default' in flag && flag.default !== undefined) ||
        ('required' in flag && flag.required);
      if (unasked) expect(some, key).toEqual(expect.arrayContaining(every.filter((l) => l?.endsWith(key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)))));
    }
  });

  it('every option when the line asks for help (--help, -h, a cluster holding h) or main() asks for every flag', async () => {
    const every = (await longs(['kv', 'get', 'foo'], { everyFlag: true })).longs;
    for (const help of ['--help', '-h', '-wh']) {
      const { program, longs: all } = await longs(['kv', 'get', 'foo', help]);
      expect(all, help).toEqual(every);
      expect(builtForLine(program), help).toBe(false);
    }
    expect(every).toContain('--prefix');
  });

  it("a parse error has the words it has with every option: a misspelt flag's suggestion is a flag the line did not spell", async () => {
    const r = await runCli(['kv', 'get', 'foo', '--prefx', '--endpoints', 'http://127.0.0.1:1'], {
      env: { OPSCTL_CONFIG_DIR: '/nonexistent', HOME: '/nonexistent' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("X unknown option '--prefx'\n  did you mean --prefix? (see: opsctl kv get --help)\n");
    const value = await runCli(['kv', 'get', 'foo', '--limit', 'x', '--endpoints', 'http://127.0.0.1:1'], {
      env: { OPSCTL_CONFIG_DIR: '/nonexistent', HOME: '/nonexistent' },
    });
    expect(value.code).toBe(2);
    expect(value.stderr).toBe('X --limit: "x" is not a whole number\n  e.g. --limit 10\n');
  });
});

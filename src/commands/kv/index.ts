import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addGroup, addVerb, groupCommand } from '../spec.js';
import { verbWithCommandTimeout } from './lib/etcdctl-env.js';
import { KV_INDEX, type KvGroupEntry, type KvVerbEntry } from './verb-index.js';

/**
 * The kv tree. A command line whose words right after `kv` name a verb (`kv get`, `kv member list`: commander
 * dispatches to it, no option between) builds the groups on its way and that verb alone, from its own spec
 * (verb-index.ts), so `kv get` loads and builds one spec of 39. Any other line (`kv --help`, `kv`, a misspelt verb,
 * etcdctl's order `kv --endpoints X get`) builds the noun from every spec (noun.ts), each verb a name completed when
 * dispatched to, as before; the whole tree (help, completion) every verb in full.
 */
export async function register(
  program: Command,
  ctx: Context,
  { wholeTree = false, argv = [], everyFlag = false }: { wholeTree?: boolean; argv?: readonly string[]; everyFlag?: boolean } = {},
): Promise<void> {
  const named = wholeTree ? undefined : namedVerb(argv);
  if (!named) {
    const { noun } = await import('./noun.js');
    addGroup(program, ctx, noun, { lazy: !wholeTree });
    return;
  }
  let parent = program;
  for (const group of named.groups) parent = groupCommand(parent, group);
  // the verb with only the options its line can use (`kv get --endpoints X foo`: 1 of get's 27), unless the line asks for its help
  addVerb(parent, ctx, verbWithCommandTimeout(await named.verb.spec()), everyFlag || asksHelp(argv) ? {} : { line: argv });
}

/** `--help`, `-h` or a short-flag cluster holding h: commander prints the verb's help, which lists every option. */
const asksHelp = (argv: readonly string[]) => argv.some((w) => w === '--help' || (/^-[^-]/.test(w) && w.includes('h')));

/** The groups and the verb that the words right after `kv` in `argv` name (by name or alias), if they name one. */
export function namedVerb(argv: readonly string[]): { groups: KvGroupEntry[]; verb: KvVerbEntry } | undefined {
  const groups: KvGroupEntry[] = [KV_INDEX];
  for (let at = argv.indexOf('kv') + 1; at > 0 && at < argv.length; at++) {
    const word = argv[at];
    const found = groups.at(-1)!.verbs.find((e) => e.name === word || e.aliases?.includes(word!));
    if (!found) return undefined;
    if (!('verbs' in found)) return { groups, verb: found };
    groups.push(found);
  }
  return undefined;
}

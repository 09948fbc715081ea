import type { Command, Option } from 'commander';

/**
 * etcdctl's order: its global flags come before the verb (`etcdctl --endpoints X get foo`). opsctl's verbs
 * own their flags, so `opsctl kv --endpoints X get foo` would stop at `kv`. This moves the flags written
 * between command words to just after the verb (`kv get --endpoints X foo`), where commander reads them,
 * when the verb reached has every one of them; anything else is left as written, for commander's own error.
 * Options before the first command word (opsctl's own: --profile, --json…) are never moved.
 */
export function flagsAfterVerb(program: Command, argv: readonly string[], complete: (verb: Command) => void = () => {}): string[] {
  const words: string[] = [];
  const moved: Array<{ flag: string; value?: string }> = [];
  let cmd = program;
  let i = 0;
  const sub = (word: string | undefined) => (word === undefined ? undefined : cmd.commands.find((c) => c.name() === word || c.aliases().includes(word)));
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') break;
    if (word.startsWith('-') && word !== '-') {
      if (cmd === program) return [...argv];
      // (the verb is not known yet: the next word is the flag's value unless it names a command here; checked below)
      const next = argv[i + 1];
      moved.push(word.includes('=') || next === undefined || next.startsWith('-') || sub(next) ? { flag: word } : { flag: word, value: argv[++i]! });
      continue;
    }
    const found = sub(word);
    if (!found) break;
    words.push(word);
    cmd = found;
  }
  if (!moved.length || cmd === program || cmd.commands.length) return [...argv];
  complete(cmd);
  // every moved flag is the verb's own (or opsctl's), taking a value exactly when it was given one; else as written, for commander's error
  const fits = (m: { flag: string; value?: string }) => {
    if (m.flag === '--help' || m.flag === '-h') return m.value === undefined;
    const o = find(cmd, m.flag) ?? find(program, m.flag);
    return Boolean(o) && (m.flag.includes('=') || takesValue(o) === (m.value !== undefined));
  };
  if (!moved.every(fits)) return [...argv];
  return [...words, ...moved.flatMap((m) => (m.value === undefined ? [m.flag] : [m.flag, m.value])), ...argv.slice(i)];
}

/** The option `flag` names (`--endpoints`, `--endpoints=X`, `-w`) on `cmd`. */
function find(cmd: Command, flag: string): Option | undefined {
  const name = flag.split('=')[0];
  return cmd.options.find((o) => o.long === name || o.short === name);
}

const takesValue = (o: Option | undefined): boolean => Boolean(o && (o.required || o.optional));

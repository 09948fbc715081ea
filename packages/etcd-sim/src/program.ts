/**
 * A running simulated member's command line (`node kv-member.cjs --kv-version 3.2 --name kv1 …`, or the
 * single executable's `opsctl __kv-member --kv-version 3.2 …`) as the same member on another version: the
 * program is the member with `--kv-version VERSION`, the rest its settings. What a driver that finds a
 * member's process (by /proc) uses as "the target's binary" when that member is simulated.
 */
export function simulatedAt(argv: readonly string[], version: string): { program: string[]; args: string[] } | undefined {
  const i = argv.indexOf('--kv-version');
  const script = argv[1] ?? '';
  if (i < 2 || argv[i + 1] === undefined || !(/kv-member[^/]*\.c?js$/.test(script) || script === '__kv-member')) return undefined;
  return { program: [argv[0]!, script, '--kv-version', version], args: [...argv.slice(2, i), ...argv.slice(i + 2)] };
}

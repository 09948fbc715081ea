import { UsageError } from '../../core/errors.js';

/** What the spec layer needs of a flag to expand its `~`: its value placeholder and whether it is a local path. */
interface PathFlag {
  readonly type: string;
  readonly value?: string;
  readonly home?: boolean;
}

/**
 * A leading `~` or `~/` of a local path is the home directory, as a shell makes it at the start of a
 * word. A shell leaves it alone after `=` (`--cluster=~/prod.yaml`, `--target-bin 3.5=~/etcd/v3.5`), so
 * opsctl does it for the flags that name a file or directory on this machine. `keyed` allows a
 * `VERSION=` before the path (`[version=]dir`). `~user/…` is refused naming the fix (opsctl does not
 * look up other users' homes); a path with `~` elsewhere is a path like any other.
 */
export function expandHome(
  value: string,
  { flag, home, keyed = false, label = `--${flag}` }: { flag: string; home: string | undefined; keyed?: boolean; label?: string },
): string {
  const m = (keyed ? /^(\d+\.\d+=)?(~[^/]*)(\/.*)?$/ : /^()(~[^/]*)(\/.*)?$/).exec(value);
  if (!m) return value;
  const [, key = '', tilde = '', rest = ''] = m;
  if (tilde !== '~') {
    throw new UsageError(`${label} ${value}: opsctl expands ~ and ~/ (your home) only, not ${tilde}`, {
      field: `--${flag}`,
      hint: `write the path in full (e.g. /home/${tilde.slice(1)}${rest || '/…'})`,
    });
  }
  if (!home) {
    throw new UsageError(`${label} ${value}: HOME is not set, so ~ names no directory`, {
      field: `--${flag}`,
      hint: 'write the path in full, or set HOME',
    });
  }
  return `${key}${home.replace(/\/+$/, '') || '/'}${rest}`;
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The options of a verb with every `home` flag's leading `~` expanded (strings, and each value of a repeated list). */
export function expandHomeFlags<O extends Record<string, unknown>>(
  flags: Readonly<Record<string, PathFlag>> | undefined,
  opts: O,
  home: string | undefined,
): O {
  let out = opts;
  for (const [key, flag] of Object.entries(flags ?? {})) {
    if (!flag.home) continue;
    const keyed = Boolean(flag.value?.includes('='));
    const v = opts[key];
    const one = (s: string) => expandHome(s, { flag: kebab(key), home, keyed });
    const next: unknown = typeof v === 'string' ? one(v) : Array.isArray(v) ? (v as unknown[]).map((x) => (typeof x === 'string' ? one(x) : x)) : v;
    if (next !== v) out = { ...out, [key]: next };
  }
  return out;
}

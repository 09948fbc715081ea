/**
 * A word as a person would type it into a POSIX shell: bare when it holds only characters no shell
 * treats specially, else single-quoted (a `'` inside becomes `'\''`). For showing command lines (hints,
 * the demo's transcript), not for building commands to run: opsctl never hands a command line to a shell.
 */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The nouns whose commands act on one profile: a hint naming one of them is followed on that profile. */
const PROFILE_NOUNS = new Set(['login', 'logout', 'auth', 'api', 'tracker', 'labels', 'config']);

/**
 * A hint whose commands are followed on the profile the failed command ran on. A command in a hint runs
 * from `opsctl` to the first of: two spaces, ` <` (a redirect), ` (`, `;`, `,`, `)` or the end; a command
 * of a profile noun that does not name a profile already gets `--profile NAME` at its end (before any
 * redirect). Without a `--profile` flag (the configured profile, or OPSCTL_PROFILE, which a shell keeps)
 * the hint is unchanged.
 */
export function withProfileFlag(hint: string, profile: string | undefined): string {
  if (profile === undefined) return hint;
  return hint.replace(/\bopsctl ([a-z][\w-]*)((?:(?! {2}| <| \(|[;,)]).)*)/g, (whole, noun: string, rest: string) => {
    if (!PROFILE_NOUNS.has(noun) || /(^|\s)--profile\b/.test(rest)) return whole;
    const trimmed = rest.trimEnd();
    return `opsctl ${noun}${trimmed} --profile ${shellWord(profile)}${rest.slice(trimmed.length)}`;
  });
}

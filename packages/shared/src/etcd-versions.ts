/**
 * etcd version strings, as the CLI and the simulated members both read them: the minor of a release,
 * their order, and the JSON gateway prefix each minor serves.
 */

/** "3.2.32" → "3.2"; undefined when it is not a version. */
export function minor(version: string | undefined): string | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return m ? `${m[1]}.${m[2]}` : undefined;
}

/** Orders two minors ("3.3" < "3.10"). */
export function compareMinor(a: string, b: string): number {
  const [a1, a2] = minorParts(a);
  const [b1, b2] = minorParts(b);
  return a1 - b1 || a2 - b2;
}

/** A version's major and minor numbers; a missing part is NaN (it compares as neither lower nor higher). */
function minorParts(version: string): [number, number] {
  const [major, minor] = version.split('.');
  return [Number(major), Number(minor)];
}

/**
 * The v3 JSON gateway prefix a member of this version serves, the one place that decides it
 * (measured on the real binaries: 3.2.32 /v3alpha; 3.3.27 /v3beta, /v3alpha redirected there;
 * 3.4.23, 3.5.35 and 3.6.16 /v3, and /v3beta still; none serves /v3alpha from 3.4 on). Undefined
 * for a version before 3.2 or not a version: the client then discovers the prefix.
 */
export function gatewayPrefixFor(version: string | undefined): string | undefined {
  const m = minor(version);
  if (!m || !m.startsWith('3.')) return undefined;
  const n = Number(m.slice(2));
  return n < 2 ? undefined : n === 2 ? '/v3alpha' : n === 3 ? '/v3beta' : '/v3';
}

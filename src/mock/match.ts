/** Group `i` of a regex match, for a group that is not optional: it always takes part when the pattern matches. */
export function group(m: RegExpExecArray, i: number): string {
  const g = m[i];
  if (g === undefined) throw new Error(`group ${i} of ${m[0]} did not take part in the match`);
  return g;
}

/**
 * `list[index]` for an index known to be in range (a loop bound checked just above, an array as long as
 * the one being walked, a group of a regex match that is not optional). Out of range is a bug in the
 * mock, not bad input: it throws rather than handing on `undefined`.
 */
export function itemAt<T>(list: readonly T[], index: number): T {
  const item = list[index];
  if (item === undefined) throw new RangeError(`no item at index ${index} of a list of ${list.length}`);
  return item;
}

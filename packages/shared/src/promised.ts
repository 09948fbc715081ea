/**
 * `fn`'s result as a promise, a throw becoming its rejection as in an async function: for a
 * function an asynchronous interface asks for whose work is synchronous.
 */
export function promised<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}

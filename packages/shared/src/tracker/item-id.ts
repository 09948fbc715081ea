import { PATH_KINDS } from './flags.js';

/**
 * What `{path}/{id}` takes in the contract (its GET, PUT or DELETE): an integer id, a uuid or other text;
 * undefined when the resource has no item path. The CLI's resource table and the mock's routes read it.
 */
export function itemIdKind(path: string): 'int' | 'uuid' | 'string' | undefined {
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const kinds = PATH_KINDS[`${method} ${path}/{}`];
    if (kinds) return kinds[0];
  }
  return undefined;
}

import { OpsError } from '../../core/errors.js';
import type { KvClient } from '../cluster/client.js';
import { compareMinor, minor } from '../cluster/parse.js';

/** The first etcd minor whose JSON gateway has each call (measured on 3.2.32, 3.3.27, 3.4.23, 3.5.35, 3.6.16). */
export const SINCE = {
  'lease list': '3.3',
  'move-leader': '3.3',
  'member promote': '3.4',
  'member add --learner': '3.4',
  'endpoint hashkv': '3.3',
} as const;

export type Call = keyof typeof SINCE;

/** The member's server version (its /version). */
export async function serverVersion(c: KvClient): Promise<string> {
  return (await c.version()).server ?? '0.0.0';
}

/** Refuses (exit 1) a call the member's version does not have, naming the version and the one that has it. */
export function needs(version: string, call: Call): void {
  const since = SINCE[call];
  if (compareMinor(minor(version) ?? '0.0', since) < 0)
    throw new OpsError(`${call}: etcd ${version} does not have this call (it came in ${since})`, 1, {
      code: 'kv_unsupported',
      hint: `upgrade the cluster to ${since} or later first (opsctl kv upgrade --to ${since})`,
    });
}

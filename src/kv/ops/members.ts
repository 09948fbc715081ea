/** The cluster's members as etcdctl's member verbs change them: add (as a learner on 3.4+), remove, update, promote (3.4+), list. */
import type { KvClient } from '../cluster/client.js';
import { asList, asObject, field, parseJsonSafe, textOf } from '../cluster/parse.js';
import { needs, serverVersion } from './versions.js';
import { UsageError } from '../../core/errors.js';
import { parseId } from './ids.js';

export interface Member {
  id: string;
  name: string;
  /** started, or unstarted (added, not yet running: no name). */
  status: 'started' | 'unstarted';
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}

function member(m: unknown): Member {
  const urls = (v: unknown) => asList(v).filter((u): u is string => typeof u === 'string');
  const name = textOf(field(m, 'name')) ?? '';
  return {
    id: textOf(field(m, 'ID', 'id')) ?? '0',
    name,
    status: name ? 'started' : 'unstarted',
    peerUrls: urls(field(m, 'peerURLs', 'peer_urls')),
    clientUrls: urls(field(m, 'clientURLs', 'client_urls')),
    isLearner: field(m, 'isLearner', 'is_learner') === true,
  };
}

const clusterId = (r: unknown) => textOf(field(asObject(r).header, 'cluster_id', 'clusterId')) ?? '0';

export async function listMembers(c: KvClient): Promise<{ clusterId: string; members: Member[]; raw: string }> {
  const raw = await c.gateway('/cluster/member/list', {});
  const r = asObject(parseJsonSafe(raw));
  return { clusterId: clusterId(r), members: asList(r.members).map(member), raw };
}

export async function addMember(
  c: KvClient,
  peerUrls: string[],
  { learner }: { learner: boolean },
): Promise<{ clusterId: string; member: Member; members: Member[] }> {
  if (learner) needs(await serverVersion(c), 'member add --learner');
  const r = asObject(parseJsonSafe(await c.gateway('/cluster/member/add', { peerURLs: peerUrls, ...(learner ? { isLearner: true } : {}) })));
  return { clusterId: clusterId(r), member: member(r.member), members: asList(r.members).map(member) };
}

export async function removeMember(c: KvClient, id: string): Promise<{ clusterId: string }> {
  return { clusterId: clusterId(parseJsonSafe(await c.gateway('/cluster/member/remove', { ID: id }))) };
}

export async function updateMember(c: KvClient, id: string, peerUrls: string[]): Promise<{ clusterId: string }> {
  return { clusterId: clusterId(parseJsonSafe(await c.gateway('/cluster/member/update', { ID: id, peerURLs: peerUrls }))) };
}

export async function promoteMember(c: KvClient, id: string): Promise<{ clusterId: string }> {
  needs(await serverVersion(c), 'member promote');
  return { clusterId: clusterId(parseJsonSafe(await c.gateway('/cluster/member/promote', { ID: id }))) };
}

/**
 * The member TEXT names: its name (as member list prints it), or its id (hex as etcdctl prints it, 0x…, or
 * #decimal). A name wins over an id that reads the same; an id need not be in the list (etcd then says so).
 * Anything else is refused naming the members there are.
 */
export function memberRef(text: string, members: Member[], field: string): { id: string; member?: Member } {
  const byName = members.find((m) => m.name && m.name === text);
  if (byName) return { id: byName.id, member: byName };
  let id: string;
  try {
    id = parseId(text, field);
  } catch {
    const known = members.map((m) => `${m.name || '(unstarted)'} ${BigInt(m.id).toString(16)}`).join(', ');
    throw new UsageError(`${field}: "${text}" is neither a member's name nor an id`, {
      field,
      hint: `give a name or an id from the member list: ${known || 'the list is empty'} (opsctl kv member list)`,
    });
  }
  return { id, member: members.find((m) => BigInt(m.id) === BigInt(id)) };
}

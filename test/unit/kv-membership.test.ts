import { describe, expect, it } from 'vitest';
import { compareMembership, describeListed, membershipChange } from '../../src/kv/cluster/membership.js';
import type { MemberListEntry } from '../../src/kv/cluster/parse.js';
import type { MemberObservation } from '../../src/kv/cluster/types.js';

const entry = (id: string, name: string, client?: string): MemberListEntry => ({
  id,
  name,
  peerUrls: [`http://10.0.0.${id}:2380`],
  clientUrls: client ? [client] : [],
});
const list = [entry('1', 'kv1', 'http://10.0.0.1:2379'), entry('2', 'kv2', 'http://10.0.0.2:2379/'), entry('3', 'kv3', 'http://10.0.0.3:2379')];
const obs = (name: string, id: string, endpoint: string): MemberObservation => ({ name, id, endpoint, reachable: true, healthy: true, healthDetail: 'true' });

describe('the cluster member list against the members given', () => {
  it('matches by the id a member reported, else its client URL (trailing slash aside), else its name', () => {
    const specs = [
      { name: '10.0.0.1:2379', endpoint: 'http://kv1.example:2379' }, // reported id 1
      { name: 'x', endpoint: 'http://10.0.0.2:2379' }, // client URL
      { name: 'kv3', endpoint: 'http://10.9.9.9:2379' }, // name (it did not answer)
    ];
    const r = compareMembership(list, specs, [obs('10.0.0.1:2379', '1', 'http://kv1.example:2379')]);
    expect(r).toEqual({ unnamed: [], strangers: [] });
  });

  it('a listed member not given is unnamed; a given member the list lacks is a stranger', () => {
    const specs = [
      { name: 'kv1', endpoint: 'http://10.0.0.1:2379' },
      { name: 'kv2', endpoint: 'http://10.0.0.2:2379' },
      { name: 'other', endpoint: 'http://192.168.0.1:2379' },
    ];
    const r = compareMembership(list, specs, []);
    expect(r.unnamed.map((e) => e.name)).toEqual(['kv3']);
    expect(r.strangers.map((s) => s.name)).toEqual(['other']);
  });

  it('an added, never started member has no name and no client URL: named by id and peer URL', () => {
    expect(describeListed(entry('17', ''))).toBe('(not started yet) (id 17, peer http://10.0.0.17:2380)');
  });

  it('says which members left or joined since pre-flight; nothing when the ids are the same', () => {
    expect(membershipChange(list, [...list].reverse())).toBeUndefined();
    expect(membershipChange(list, [list[0]!, list[1]!, entry('4', '')])).toBe(
      "the cluster's member list changed since pre-flight (kv3 (id 3, peer http://10.0.0.3:2380) left, (not started yet) (id 4, peer http://10.0.0.4:2380) joined; now 3 members)",
    );
  });
});

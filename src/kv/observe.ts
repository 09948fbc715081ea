import type { MemberSpec } from './cluster.js';
import { KvClient } from './client.js';
import type { ClusterObservation, MemberObservation } from './types.js';

export interface ObserveOptions {
  timeoutMs: number;
  debug?: (line: string) => void;
}

/** One member as opsctl sees it: health, versions, leader, revision. Never throws. */
export async function observeMember(m: MemberSpec, opts: ObserveOptions): Promise<MemberObservation & { real?: boolean }> {
  const c = new KvClient(m.endpoint, { timeoutMs: opts.timeoutMs, debug: opts.debug });
  const obs: MemberObservation & { real?: boolean } = { name: m.name, id: '', endpoint: m.endpoint, reachable: false, healthy: false, healthDetail: 'no answer' };
  try {
    const h = await c.health();
    obs.reachable = true;
    obs.healthy = h.healthy;
    obs.healthDetail = h.detail;
    const v = await c.version();
    obs.serverVersion = v.server;
    obs.real = v.real;
    obs.clusterVersion = v.cluster === 'not_decided' ? undefined : v.cluster;
    const s = await c.status();
    obs.id = s.memberId;
    obs.leaderId = s.leaderId;
    obs.revision = s.revision;
  } catch (err) {
    obs.error = (err as Error).message;
    if (obs.reachable) obs.healthy = false;
  }
  return obs;
}

/** Every member, in parallel, plus the alarms one reachable member reports. */
export async function observeCluster(members: MemberSpec[], opts: ObserveOptions): Promise<ClusterObservation & { members: Array<MemberObservation & { real?: boolean }> }> {
  const obs = await Promise.all(members.map((m) => observeMember(m, opts)));
  let alarms: ClusterObservation['alarms'] = [];
  const any = obs.find((o) => o.reachable && o.healthy);
  if (any) {
    try {
      alarms = await new KvClient(any.endpoint, { timeoutMs: opts.timeoutMs, debug: opts.debug }).alarms();
    } catch (err) {
      alarms = [{ memberId: any.id, alarm: `unknown (alarm list failed: ${(err as Error).message})` }];
    }
  }
  return { members: obs, alarms };
}

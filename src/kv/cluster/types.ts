/** What opsctl observed of one member, and the cluster as a whole (input of the planner). */
export interface MemberObservation {
  name: string;
  /** uint64 as a decimal string. */
  id: string;
  endpoint: string;
  reachable: boolean;
  healthy: boolean;
  healthDetail: string;
  serverVersion?: string;
  clusterVersion?: string;
  /** The leader this member reports (uint64 string). */
  leaderId?: string;
  revision?: string;
  /** The raft index the member applied up to (uint64 string). */
  raftIndex?: string;
  error?: string;
  /** Real etcd (answers etcdserver/etcdcluster). */
  real?: boolean;
}

export interface ClusterObservation {
  members: MemberObservation[];
  alarms: Array<{ memberId: string; alarm: string }>;
  /** Whether etcd auth is enabled (asked only by the pre-flight; undefined: not asked or unknown). */
  authEnabled?: boolean;
}

export type StepKind = 'snapshot' | 'stop' | 'wait-stopped' | 'backup-data' | 'start' | 'wait-healthy' | 'settle';
export type FinalKind = 'wait-cluster-version' | 'final-health';

export interface MemberPlan {
  name: string;
  id: string;
  endpoint: string;
  fromVersion: string;
  action: 'upgrade' | 'restart' | 'skip';
  reason: string;
  wasLeader: boolean;
}

export interface UpgradePlan {
  source: string;
  target: string;
  /** In the order they will be handled: followers first, the leader last. */
  members: MemberPlan[];
  clusterVersion: string;
  /** etcd 3.6's downgrade (kv downgrade): the members go one minor down. */
  downgrade?: boolean;
}

export const MEMBER_STEPS: StepKind[] = ['snapshot', 'stop', 'wait-stopped', 'backup-data', 'start', 'wait-healthy', 'settle'];

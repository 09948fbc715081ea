// The one way a test brings up a cluster (docs/development.md, "A cluster in a test"): startCluster and what it returns.
export type { ClusterEnv, MemberKind, RunOptions, TestCluster, TestMember } from './cluster.js';
export type { ContainerCluster, ContainerMember, EngineCli } from './container.js';
export { DOCKER, dockerViaPodman, etcdImages, imageOf, PODMAN, podmanProblem } from './container.js';
export { readJournal } from './journal.js';
export type { CommandFileOptions, RealCluster, RealMember } from './real.js';
export { watchDown } from './real.js';
export type { KvSandbox, SandboxMember } from './simulated.js';
export { startCluster } from './start.js';
export type {
  ContainerStart,
  ContainerTestCluster,
  FileOptions,
  Ready,
  RealStart,
  RealTestCluster,
  SimulatedMember,
  SimulatedStart,
  SimulatedTestCluster,
} from './start.js';

// Moved to test/framework/real.ts (the real-etcd backend of startCluster); re-exported for the kv-etcd bench
// (scripts/bench/kv-etcd.bench.mjs bundles it). Tests: startCluster from test/framework.
export * from '../framework/real.js';

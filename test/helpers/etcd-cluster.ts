// Moved to test/framework/real.ts (the real-etcd backend of startCluster); re-exported for the files not moved yet
// (test/unit/test-framework.test.ts lists them). New tests: startCluster from test/framework.
export * from '../framework/real.js';

// The lock moved to core/lock.ts (core/shared-pacer.ts takes it, and core imports nothing of config/);
// this name stays for the mock's store and the tests that import it here.
export * from '../core/lock.js';

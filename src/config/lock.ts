// The file lock is shared with the mock's state file (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/lock.js';

// The file lock is shared with the mock's state file (packages/shared); core/ keeps this path for the CLI.
export * from '@opsctl/shared/lock.js';

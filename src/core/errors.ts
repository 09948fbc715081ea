// The error shape and exit codes are shared with the mock (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/errors.js';

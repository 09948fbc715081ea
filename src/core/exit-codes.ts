// Shared with the mock (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/exit-codes.js';

// File system errors in plain words, shared with the mock (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/file-errors.js';

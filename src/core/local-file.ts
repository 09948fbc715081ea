// Safe reads of local files, shared with the mock's state file (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/local-file.js';

// The label service's schema is a contract the CLI and the mock share (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/labels/schema.js';

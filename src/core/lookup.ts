// Own-key lookups (no prototype members by a client's string) are shared with the mock (packages/shared); core/ keeps this path.
export * from '@opsctl/shared/lookup.js';

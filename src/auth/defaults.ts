// Shared with the mock authorization server (packages/shared/src/oauth.ts).
export { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/shared/oauth.js';

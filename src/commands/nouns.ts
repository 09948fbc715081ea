/**
 * One line per top-level command. The root --help lists these without building the nouns' subtrees:
 * only the noun a command line names is registered in full (see program.ts), which keeps start-up flat
 * as the tree grows.
 */
import { LADDER_BOTTOM, LADDER_TOP } from '@opsctl/shared/etcd-ladder.js';

export const NOUN_SUMMARIES = {
  login: 'sign in with OAuth 2.0 (PKCE, loopback redirect, system browser) and store the tokens',
  logout: 'revoke the stored OAuth tokens on the server and remove them locally',
  api: 'make an authenticated request to a service and print the JSON answer (like gh api)',
  auth: 'credentials: sign-in status, access tokens for scripts, a stored tracker token',
  tracker: 'script the work tracker (REST API v3): every resource, apply files, search',
  labels: 'manage labels of the label-management service: drafts, publishing, fields, permissions, apply -f',
  kv: `a key-value (etcd) cluster: health, snapshots, a sandbox, and a safe rolling upgrade, hop by hop from ${LADDER_BOTTOM} to ${LADDER_TOP}`,
  config: 'read and change profiles: an endpoint per service, OAuth client settings',
  mock: "the mocked services, standalone; the mock authorization server's clients (developer console) and security events",
  demo: 'a non-interactive tour of every job, against a fresh temporary embedded state',
  completion: 'print a shell completion script, generated from the command tree',
  help: 'show help for a command, or a topic: exit-codes, environment',
} as const;

export type NounName = keyof typeof NOUN_SUMMARIES;

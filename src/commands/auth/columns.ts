import type { AccountRow } from '../../auth/accounts.js';
import type { Column } from '../../core/output.js';

/** The columns of `auth list` and `auth status --all`. */
export function accountColumns(shortScope: (s: string) => string): Column[] {
  const state = { ok: 'ok', other_issuer: 'other issuer: opsctl login', ended: 'ended: opsctl login' } as const;
  return [
    { key: 'profile' },
    { key: 'active', get: (r: AccountRow) => (r.active ? '*' : '') },
    { key: 'account' },
    { key: 'issuer', get: (r: AccountRow) => (r.issuer === 'embedded' ? 'embedded mock' : (r.issuer ?? 'unknown')) },
    { key: 'scopes', get: (r: AccountRow) => r.scopes.map(shortScope).join(' ') },
    { key: 'expires_at', header: 'expires' },
    { key: 'storage' },
    { key: 'state', get: (r: AccountRow) => state[r.state] },
  ];
}

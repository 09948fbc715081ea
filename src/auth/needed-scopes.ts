import { SCOPE_BASE } from './scopes.js';

/**
 * The scopes a request of the api or labels service needs (any one of them), as the services say in their
 * 403s: Google's Drive Labels API (reads: any label scope; changes: drive.labels or the admin scope; with
 * useAdminAccess: the admin scopes) and the media API (reads: any media scope; changes: a write scope).
 * `ask` is the one to name in the fix. Undefined: no scope known for it (the server decides).
 */
export function neededScopes(service: string, method: string, path: string): { anyOf: string[]; ask: string; doing: string } | undefined {
  const write = method.toUpperCase() !== 'GET' && method.toUpperCase() !== 'HEAD';
  const s = (name: string) => `${SCOPE_BASE}/${name}`;
  if (service === 'labels') {
    const admin = /[?&]useAdminAccess=true\b/.test(path);
    if (admin)
      return write
        ? { anyOf: [s('drive.admin.labels')], ask: 'drive.admin.labels', doing: 'change labels with admin access' }
        : { anyOf: [s('drive.admin.labels'), s('drive.admin.labels.readonly')], ask: 'drive.admin.labels.readonly', doing: 'read labels with admin access' };
    return write
      ? { anyOf: [s('drive.labels'), s('drive.admin.labels')], ask: 'drive.labels', doing: 'change labels' }
      : {
          anyOf: ['drive.labels', 'drive.labels.readonly', 'drive.admin.labels', 'drive.admin.labels.readonly'].map(s),
          ask: 'drive.labels.readonly',
          doing: 'read labels',
        };
  }
  if (service === 'api' && /^\/?media\//.test(path.replace(/^https?:\/\/[^/]+/, ''))) {
    return write
      ? { anyOf: ['media', 'media.force-ssl', 'mediapartner'].map(s), ask: 'media', doing: 'change media resources' }
      : { anyOf: ['media', 'media.readonly', 'media.force-ssl', 'mediapartner'].map(s), ask: 'media.readonly', doing: 'read media resources' };
  }
  return undefined;
}

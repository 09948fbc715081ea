/**
 * The header that carries the tracker token. The real service (api.app.shortcut.com, the contract in
 * shared/ref/) reads `Shortcut-Token`; the seed's service and opsctl's mock read `Tracker-Token` (the mock
 * accepts both). The user never has to know: the default follows the host, and the profile setting
 * `tracker_token_header` (or OPSCTL_TRACKER_TOKEN_HEADER) overrides it for a proxy or a self-hosted copy.
 * Only these two names are allowed, so --debug always knows which header to redact.
 */
import { TRACKER_TOKEN_HEADERS, type TrackerTokenHeader } from '../config/services.js';

// the names a profile setting may take, so config/ checks them without importing this room
export { TRACKER_TOKEN_HEADERS, type TrackerTokenHeader };

/** Hosts of the real service: shortcut.com and its subdomains. */
export function isShortcutHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'shortcut.com' || h.endsWith('.shortcut.com');
}

/** The header to send to `baseUrl`: the explicit setting when given, else by host. */
export function trackerTokenHeader(baseUrl: string, setting?: string): TrackerTokenHeader {
  if (setting) {
    const named = TRACKER_TOKEN_HEADERS.find((h) => h.toLowerCase() === setting.trim().toLowerCase());
    if (named) return named;
  }
  let host = '';
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    host = '';
  }
  return isShortcutHost(host) ? 'Shortcut-Token' : 'Tracker-Token';
}

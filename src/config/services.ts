/** The services a profile names an endpoint for. `oauth` is the `auth` endpoint's mock. */
export const SERVICES = ['auth', 'api', 'tracker', 'labels'] as const;
export type Service = (typeof SERVICES)[number];

export const EMBEDDED_PROFILE = 'embedded';

/** The tracker token headers a profile may name (`tracker_token_header`); tracker/token-header.ts picks one by host. */
export const TRACKER_TOKEN_HEADERS = ['Shortcut-Token', 'Tracker-Token'] as const;
export type TrackerTokenHeader = (typeof TRACKER_TOKEN_HEADERS)[number];

// The label service API versions a profile may name (`labels_version`): in packages/shared, apart from the
// label schema (every command loads this file; the schema is for the labels commands).
export { LABEL_API_VERSIONS, type LabelApiVersion } from '@opsctl/shared/labels/versions.js';

/** The environment variable that overrides a service's endpoint, e.g. OPSCTL_TRACKER_URL. */
export function endpointEnvVar(service: Service): string {
  return `OPSCTL_${service.toUpperCase()}_URL`;
}

/** Where a service is reached, once resolved (src/wiring/endpoint.ts). */
export interface Endpoint {
  url: string;
  /** Served by the in-process embedded mock. */
  embedded: boolean;
  /** Where the URL came from, for `auth status` and error messages. */
  source: 'env' | 'profile' | 'embedded';
  /**
   * Set when the URL changes from one process to the next (a server started inside this process, such
   * as the embedded mock, listens on a new port each time): the name stored accounts and tokens keep for
   * the server instead of its URL.
   */
  stableId?: string;
}

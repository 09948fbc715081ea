/** The services a profile names an endpoint for. `oauth` is the `auth` endpoint's mock. */
export const SERVICES = ['auth', 'api', 'tracker', 'labels'] as const;
export type Service = (typeof SERVICES)[number];

export const EMBEDDED_PROFILE = 'embedded';

/** The environment variable that overrides a service's endpoint, e.g. OPSCTL_TRACKER_URL. */
export function endpointEnvVar(service: Service): string {
  return `OPSCTL_${service.toUpperCase()}_URL`;
}

import { ApiError } from '../core/errors.js';
import type { HttpClient, Query } from '../core/http.js';
import { NameResolver } from './names.js';
import type { ResourceSpec } from './resources.js';

export const API_PREFIX = '/api/v3';

/** What to do next after an error of the tracker, by status and the server's error name. */
export function hintFor(err: ApiError, resource?: ResourceSpec): string | undefined {
  const body = err.body as { error?: string; feature_tag?: string; reason_tag?: string } | undefined;
  // the typed errors by their schemas: DisabledFeatureError has feature_tag, UnusableEntitlementError reason_tag
  const name = body?.feature_tag ? 'DisabledFeatureError' : body?.reason_tag === 'entitlement-violation' ? 'UnusableEntitlementError' : body?.error;
  const noun = resource ? `opsctl tracker ${resource.name}` : 'opsctl tracker <resource>';
  const lookup = !resource || resource.verbs.includes('list') ? `${noun} list` : `${noun} --help`;
  if (err.status === 401) return 'set OPSCTL_TRACKER_TOKEN to a valid API token, or run: opsctl auth store-token --service tracker --with-token < token.txt';
  if (name === 'DisabledFeatureError') return 'the feature is turned off for this workspace: turn it on in the workspace settings, then retry';
  if (name === 'UnusableEntitlementError') return "the workspace's plan has no room left for this: archive an unused one or upgrade the plan, then retry";
  if (err.status === 403) return 'the token is not allowed to do this: use a token of a member with the right role';
  if (err.status === 404) return `check the id: ${lookup}`;
  if (name === 'maximum-results-exceeded') return 'a search reaches its first 1,000 results only: narrow the query (more words, or a search of one kind)';
  if (err.status === 409) return `the record changed meanwhile: read it again (${noun} get ID) and retry with its current values`;
  if (err.status === 400 || err.status === 413) return `the server named the field it refused; fix it and retry (see: ${noun} --help)`;
  if (err.status === 422) return `the server said what stands in the way; look at the current state (${lookup}), fix that, and retry`;
  if (err.status === 429) return 'the request limit (200 a minute) was still exceeded after retries: wait a minute and run again';
  return undefined;
}

/** Gives every ApiError of `http` a hint (when it has none), without changing anything else. */
export function withHints(http: HttpClient, resource?: ResourceSpec): HttpClient {
  const request = http.request.bind(http);
  return Object.assign(Object.create(http) as HttpClient, {
    request: async (...args: Parameters<HttpClient['request']>) => {
      try {
        return await request(...args);
      } catch (err) {
        if (err instanceof ApiError && !err.hint) {
          throw new ApiError(err.service, err.status, err.message.replace(/^[^:]+: HTTP \d+: /, ''), err.body, {
            code: err.code,
            hint: hintFor(err, resource),
            cause: err,
          });
        }
        throw err;
      }
    },
  });
}

/** The id of a record the server returned, as text ('' when it has none). */
export function idOf(data: unknown): string {
  if (data === null || typeof data !== 'object' || !('id' in data)) return '';
  return typeof data.id === 'string' || typeof data.id === 'number' ? String(data.id) : '';
}

/** A record as the tracker API returns it, until a caller names the fields it reads. */
export type TrackerRecord = Record<string, unknown>;

/** The tracker REST API v3 over the shared HTTP layer: generic CRUD driven by the resource table. */
export class TrackerClient {
  readonly http: HttpClient;
  /** Names instead of ids, for this run (each kind's list fetched at most once). */
  readonly names: NameResolver;

  constructor(http: HttpClient, resource?: ResourceSpec) {
    this.http = withHints(http, resource);
    this.names = new NameResolver(this.http, API_PREFIX);
  }

  path(spec: ResourceSpec, id?: string | number, suffix = ''): string {
    return `${API_PREFIX}${spec.path}${id === undefined ? '' : `/${encodeURIComponent(String(id))}`}${suffix}`;
  }

  list<T = TrackerRecord>(spec: ResourceSpec, query?: Query): Promise<T[]> {
    return this.http.get<T[]>(this.path(spec), query);
  }
  get<T = TrackerRecord>(spec: ResourceSpec, id: string | number): Promise<T> {
    return this.http.get<T>(this.path(spec, id));
  }
  create<T = TrackerRecord>(spec: ResourceSpec, body: Record<string, unknown>): Promise<T> {
    return this.http.post<T>(this.path(spec), body);
  }
  update<T = TrackerRecord>(spec: ResourceSpec, id: string | number, body: Record<string, unknown>): Promise<T> {
    return this.http.put<T>(this.path(spec, id), body);
  }
  async delete(spec: ResourceSpec, id: string | number): Promise<void> {
    // a DELETE with a body only where the document requires one (documents: GetDoc, all optional: `{}`)
    if (spec.deleteBody) await this.http.request({ method: 'DELETE', path: this.path(spec, id), json: spec.deleteBody });
    else await this.http.delete(this.path(spec, id));
  }
}

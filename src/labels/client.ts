import { ApiError } from '../core/errors.js';
import type { HttpClient, Query } from '../core/http.js';
import { API, apiPrefix, DEFAULT_LABEL_API_VERSION, METHODS, type LabelApiVersion, type MethodId } from './schema.js';
import type { Label, LabelLimits, LabelPermission, DeltaRequest, DeltaResponse } from './types.js';

export { API };

/** A method's URL path from the table: the resource name takes the place of the path's `{…Id}` part. */
export function methodPath(id: MethodId, name?: string, version: LabelApiVersion = DEFAULT_LABEL_API_VERSION): string {
  const path: string = METHODS[id].path;
  return `${apiPrefix(version)}/${name ? path.replace(/^.*\}/, name) : path}`;
}
const takesQuery = (id: MethodId, param: string) => (METHODS[id].params as readonly string[]).includes(param);
const takesBody = (id: MethodId, param: string) => ((METHODS[id] as { body?: readonly string[] }).body ?? []).includes(param);

/** What to do next after an error of the label service, by status and Google status. */
export function hintFor(err: ApiError): string | undefined {
  const status = (err.body as { error?: { status?: string } } | undefined)?.error?.status;
  if (err.status === 401) return 'sign in: opsctl login   (or set OPSCTL_ACCESS_TOKEN to a valid access token)';
  if (err.status === 403 && /needs the scope|admin scope/i.test(err.message) && !/useAdminAccess=true and/.test(err.message)) {
    return 'sign in with the admin scope: opsctl login --scopes openid email drive.labels drive.admin.labels';
  }
  if (err.status === 403 && /useAdminAccess|admin label/i.test(err.message)) {
    return 'add --admin (useAdminAccess; it needs the drive.admin.labels scope: opsctl login --scopes openid email drive.labels drive.admin.labels)';
  }
  if (err.status === 403) return 'sign in with the https://www.googleapis.com/auth/drive.labels scope, or ask an editor of the label for the EDITOR role';
  if (err.status === 404) return 'check the id or name: opsctl labels list';
  if (status === 'FAILED_PRECONDITION') return "the label's state or revision does not allow this now: look at it with opsctl labels get ID, then retry";
  if (err.status === 400) return 'the server named the field it refused; fix it and retry';
  return undefined;
}

/** A 403 because the token lacks a scope (Google: "insufficient authentication scopes", ACCESS_TOKEN_SCOPE_INSUFFICIENT). */
export function missingScope(err: ApiError): boolean {
  const details = (err.body as { error?: { details?: Array<{ reason?: string }> } } | undefined)?.error?.details;
  return (
    /insufficient authentication scopes|needs the scope/i.test(err.message) || Boolean(details?.some((d) => d?.reason === 'ACCESS_TOKEN_SCOPE_INSUFFICIENT'))
  );
}

/** The label-management API (v2, or v2beta by the profile's labels_version) over the shared HTTP layer; errors carry a hint saying what to do next. */
export class LabelsClient {
  readonly http: HttpClient;
  /** The API version the paths are under. */
  version: LabelApiVersion = DEFAULT_LABEL_API_VERSION;
  /** Send `useAdminAccess` (query parameter or body field, as each method defines it). */
  admin = false;
  /** Send `languageCode` (BCP-47) with every method that takes it. */
  languageCode: string | undefined;

  constructor(http: HttpClient) {
    const wrap =
      <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await fn(...args);
        } catch (err) {
          if (err instanceof ApiError && !err.hint) {
            // a missing scope is refused authentication (exit 4), not a failure of the request
            const code = err.status === 403 && missingScope(err) ? 'insufficient_scope' : err.code;
            throw new ApiError(err.service, err.status, err.message.replace(/^[^:]+: HTTP \d+: /, ''), err.body, { code, hint: hintFor(err), cause: err });
          }
          throw err;
        }
      };
    this.http = Object.assign(Object.create(http) as HttpClient, {
      get: wrap(http.get.bind(http)),
      post: wrap(http.post.bind(http)),
      patch: wrap(http.patch.bind(http)),
      delete: wrap(http.delete.bind(http)),
    });
  }

  /** A method's path under this client's version. */
  private path(id: MethodId, name?: string): string {
    return methodPath(id, name, this.version);
  }

  /** `useAdminAccess` and `languageCode` where the method takes them as query parameters (the table says which). */
  private q(id: MethodId, query: Query = {}): Query {
    return {
      ...query,
      ...(this.admin && takesQuery(id, 'useAdminAccess') ? { useAdminAccess: true } : {}),
      ...(this.languageCode && takesQuery(id, 'languageCode') ? { languageCode: this.languageCode } : {}),
    };
  }
  /** The same for methods that take them in the body. */
  private b<T extends Record<string, unknown>>(id: MethodId, body: T): T {
    return {
      ...body,
      ...(this.admin && takesBody(id, 'useAdminAccess') ? { useAdminAccess: true } : {}),
      ...(this.languageCode && takesBody(id, 'languageCode') ? { languageCode: this.languageCode } : {}),
    };
  }

  /** Every page of a list (pageSize 200). */
  private async all<T>(path: string, key: string, query: Query = {}, limit = Infinity): Promise<T[]> {
    return (await this.upTo<T>(path, key, query, limit)).items;
  }

  /** Pages until `limit` items; `more` says whether the server had more than were fetched. */
  private async upTo<T>(path: string, key: string, query: Query, limit: number): Promise<{ items: T[]; more: boolean }> {
    const out: T[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.http.get<Record<string, unknown>>(path, { ...query, pageSize: Math.min(200, limit - out.length), pageToken });
      out.push(...((page[key] as T[] | undefined) ?? []));
      pageToken = typeof page.nextPageToken === 'string' ? page.nextPageToken : undefined;
    } while (pageToken && out.length < limit);
    return { items: out.slice(0, limit), more: Boolean(pageToken) || out.length > limit };
  }

  /** Labels up to `limit`, and whether more exist beyond it. */
  listUpTo(query: { view?: string; publishedOnly?: boolean; minimumRole?: string }, limit: number): Promise<{ items: Label[]; more: boolean }> {
    return this.upTo<Label>(this.path('labels.list'), 'labels', this.q('labels.list', { view: 'LABEL_VIEW_FULL', ...query }), limit);
  }

  list(query: { view?: string; publishedOnly?: boolean; minimumRole?: string } = {}, limit?: number): Promise<Label[]> {
    return this.all<Label>(this.path('labels.list'), 'labels', this.q('labels.list', { view: 'LABEL_VIEW_FULL', ...query }), limit);
  }
  get(name: string, view = 'LABEL_VIEW_FULL'): Promise<Label> {
    return this.http.get<Label>(this.path('labels.get', name), this.q('labels.get', { view }));
  }
  create(body: Record<string, unknown>): Promise<Label> {
    return this.http.post<Label>(this.path('labels.create'), body, this.q('labels.create'));
  }
  async delete(name: string, requiredRevisionId?: string): Promise<void> {
    await this.http.delete(
      this.path('labels.delete', name),
      this.q('labels.delete', requiredRevisionId ? { 'writeControl.requiredRevisionId': requiredRevisionId } : {}),
    );
  }
  delta(name: string, requests: DeltaRequest[], requiredRevisionId?: string): Promise<DeltaResponse> {
    return this.http.post<DeltaResponse>(
      this.path('labels.delta', name),
      this.b('labels.delta', { requests, view: 'LABEL_VIEW_FULL', ...(requiredRevisionId ? { writeControl: { requiredRevisionId } } : {}) }),
    );
  }
  lifecycle(name: string, verb: 'publish' | 'disable' | 'enable', body: Record<string, unknown> = {}): Promise<Label> {
    const id = `labels.${verb}` as const;
    return this.http.post<Label>(this.path(id, name), this.b(id, body));
  }
  copyMode(name: string, copyMode: string): Promise<Label> {
    return this.http.post<Label>(this.path('labels.updateLabelCopyMode', name), this.b('labels.updateLabelCopyMode', { copyMode, view: 'LABEL_VIEW_FULL' }));
  }
  enabledApps(name: string, apps: string[]): Promise<Label> {
    return this.http.post<Label>(
      this.path('labels.updateLabelEnabledAppSettings', name),
      this.b('labels.updateLabelEnabledAppSettings', { enabledAppSettings: { enabledApps: apps.map((app) => ({ app })) }, view: 'LABEL_VIEW_FULL' }),
    );
  }
  permissions(parent: string): Promise<LabelPermission[]> {
    return this.all<LabelPermission>(this.path('labels.permissions.list', parent), 'labelPermissions', this.q('labels.permissions.list'));
  }
  createPermission(parent: string, p: LabelPermission): Promise<LabelPermission> {
    return this.http.post<LabelPermission>(this.path('labels.permissions.create', parent), p, this.q('labels.permissions.create'));
  }
  /** PATCH `…/permissions` (labels.updatePermissions, or labels.revisions.updatePermissions under a revision): creates or updates the principal's permission. */
  updatePermission(parent: string, p: LabelPermission): Promise<LabelPermission> {
    const id = parent.includes('/revisions/') ? 'labels.revisions.updatePermissions' : 'labels.updatePermissions';
    return this.http.patch<LabelPermission>(this.path(id, parent), p, this.q(id));
  }
  async deletePermission(name: string): Promise<void> {
    await this.http.delete(`${apiPrefix(this.version)}/${name}`, this.q('labels.permissions.delete'));
  }
  async batchUpdatePermissions(parent: string, perms: LabelPermission[]): Promise<LabelPermission[]> {
    const r = await this.http.post<{ permissions?: LabelPermission[] }>(
      this.path('labels.permissions.batchUpdate', parent),
      this.b('labels.permissions.batchUpdate', { requests: perms.map((labelPermission) => ({ parent, labelPermission })) }),
    );
    return r.permissions ?? [];
  }
  async batchDeletePermissions(parent: string, names: string[]): Promise<void> {
    await this.http.post(
      this.path('labels.permissions.batchDelete', parent),
      this.b('labels.permissions.batchDelete', { requests: names.map((name) => ({ name })) }),
    );
  }
  locks(parent: string): Promise<Array<Record<string, unknown>>> {
    return this.all(this.path('labels.locks.list', parent), 'labelLocks');
  }
  limits(): Promise<LabelLimits> {
    return this.http.get<LabelLimits>(this.path('limits.getLabel'), { name: 'limits/label' });
  }
  capabilities(): Promise<Record<string, unknown>> {
    return this.http.get(this.path('users.getCapabilities', 'users/me'));
  }
}

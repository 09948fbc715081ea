import type { HttpClient, Query } from '../core/http.js';
import type { Label, LabelLimits, LabelPermission, DeltaRequest, DeltaResponse } from './types.js';

export const API = '/v2beta';

/** The label-management API v2beta over the shared HTTP layer. */
export class LabelsClient {
  constructor(readonly http: HttpClient) {}

  /** Every page of a list (pageSize 200). */
  private async all<T>(path: string, key: string, query: Query = {}, limit = Infinity): Promise<T[]> {
    const out: T[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.http.get<Record<string, any>>(path, { ...query, pageSize: Math.min(200, limit - out.length), pageToken });
      out.push(...((page[key] as T[] | undefined) ?? []));
      pageToken = page.nextPageToken;
    } while (pageToken && out.length < limit);
    return out;
  }

  list(query: { view?: string; publishedOnly?: boolean; minimumRole?: string; useAdminAccess?: boolean } = {}, limit?: number): Promise<Label[]> {
    return this.all<Label>(`${API}/labels`, 'labels', { view: 'LABEL_VIEW_FULL', ...query }, limit);
  }
  get(name: string, view = 'LABEL_VIEW_FULL'): Promise<Label> {
    return this.http.get<Label>(`${API}/${name}`, { view });
  }
  create(body: Record<string, unknown>, useAdminAccess = false): Promise<Label> {
    return this.http.post<Label>(`${API}/labels`, body, useAdminAccess ? { useAdminAccess: true } : undefined);
  }
  async delete(name: string, requiredRevisionId?: string): Promise<void> {
    await this.http.delete(`${API}/${name}`, requiredRevisionId ? { 'writeControl.requiredRevisionId': requiredRevisionId } : undefined);
  }
  delta(name: string, requests: DeltaRequest[], requiredRevisionId?: string): Promise<DeltaResponse> {
    return this.http.post<DeltaResponse>(`${API}/${name}:delta`, {
      requests,
      view: 'LABEL_VIEW_FULL',
      ...(requiredRevisionId ? { writeControl: { requiredRevisionId } } : {}),
    });
  }
  lifecycle(name: string, verb: 'publish' | 'disable' | 'enable', body: Record<string, unknown> = {}): Promise<Label> {
    return this.http.post<Label>(`${API}/${name}:${verb}`, body);
  }
  copyMode(name: string, copyMode: string): Promise<Label> {
    return this.http.post<Label>(`${API}/${name}:updateLabelCopyMode`, { copyMode, view: 'LABEL_VIEW_FULL' });
  }
  enabledApps(name: string, apps: string[]): Promise<Label> {
    return this.http.post<Label>(`${API}/${name}:updateLabelEnabledAppSettings`, {
      enabledAppSettings: { enabledApps: apps.map((app) => ({ app })) },
      view: 'LABEL_VIEW_FULL',
    });
  }
  permissions(parent: string): Promise<LabelPermission[]> {
    return this.all<LabelPermission>(`${API}/${parent}/permissions`, 'labelPermissions');
  }
  createPermission(parent: string, p: LabelPermission): Promise<LabelPermission> {
    return this.http.post<LabelPermission>(`${API}/${parent}/permissions`, p);
  }
  async deletePermission(name: string): Promise<void> {
    await this.http.delete(`${API}/${name}`);
  }
  async batchUpdatePermissions(parent: string, perms: LabelPermission[]): Promise<LabelPermission[]> {
    const r = await this.http.post<{ permissions?: LabelPermission[] }>(`${API}/${parent}/permissions:batchUpdate`, {
      requests: perms.map((labelPermission) => ({ parent, labelPermission })),
    });
    return r.permissions ?? [];
  }
  async batchDeletePermissions(parent: string, names: string[]): Promise<void> {
    await this.http.post(`${API}/${parent}/permissions:batchDelete`, { requests: names.map((name) => ({ name })) });
  }
  locks(parent: string): Promise<Array<Record<string, unknown>>> {
    return this.all(`${API}/${parent}/locks`, 'labelLocks');
  }
  limits(): Promise<LabelLimits> {
    return this.http.get<LabelLimits>(`${API}/limits/label`, { name: 'limits/label' });
  }
  capabilities(): Promise<Record<string, unknown>> {
    return this.http.get(`${API}/users/me/capabilities`);
  }
}

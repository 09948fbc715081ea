import type { HttpClient, Query } from '../core/http.js';
import type { ResourceSpec } from './resources.js';

export const API_PREFIX = '/api/v3';

/** The tracker REST API v3 over the shared HTTP layer: generic CRUD driven by the resource table. */
export class TrackerClient {
  constructor(readonly http: HttpClient) {}

  path(spec: ResourceSpec, id?: string | number, suffix = ''): string {
    return `${API_PREFIX}${spec.path}${id === undefined ? '' : `/${encodeURIComponent(String(id))}`}${suffix}`;
  }

  list<T = any>(spec: ResourceSpec, query?: Query): Promise<T[]> {
    return this.http.get<T[]>(this.path(spec), query);
  }
  get<T = any>(spec: ResourceSpec, id: string | number): Promise<T> {
    return this.http.get<T>(this.path(spec, id));
  }
  create<T = any>(spec: ResourceSpec, body: Record<string, unknown>): Promise<T> {
    return this.http.post<T>(this.path(spec), body);
  }
  update<T = any>(spec: ResourceSpec, id: string | number, body: Record<string, unknown>): Promise<T> {
    return this.http.put<T>(this.path(spec, id), body);
  }
  async delete(spec: ResourceSpec, id: string | number): Promise<void> {
    await this.http.delete(this.path(spec, id));
  }
}

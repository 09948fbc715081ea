import { request } from 'undici';
import { mintAccessToken } from '@opsctl/mock/services/oauth/tokens.js';
import type { MockServer } from '@opsctl/mock/server.js';

export const LABEL_SCOPES = {
  rw: 'https://www.googleapis.com/auth/drive.labels',
  ro: 'https://www.googleapis.com/auth/drive.labels.readonly',
  admin: 'https://www.googleapis.com/auth/drive.admin.labels',
  adminRo: 'https://www.googleapis.com/auth/drive.admin.labels.readonly',
};

/** Mints an access token straight into the mock's state (what the token endpoint does after a login). */
export async function mintToken(server: MockServer, opts: { email?: string; sub?: string; scopes?: string[]; ttlSeconds?: number } = {}): Promise<string> {
  return server.store.write(
    (s) =>
      mintAccessToken(
        s,
        {
          client_id: 'test-client',
          sub: opts.sub ?? (opts.email ?? 'ada@example.com').split('@')[0]!,
          email: opts.email ?? 'ada@example.com',
          scopes: opts.scopes ?? [LABEL_SCOPES.rw],
          ttlSeconds: opts.ttlSeconds ?? 3600,
        },
        Date.now(),
      ).token,
  );
}

export interface Api {
  (method: string, path: string, json?: unknown, token?: string | null): Promise<{ status: number; body: any }>;
}

/** A raw HTTP caller of the label API with a default token. */
export function labelsApi(server: MockServer, token: string): Api {
  return async (method, path, json, tok) => {
    const headers: Record<string, string> = {};
    const t = tok === undefined ? token : tok;
    if (t) headers.authorization = `Bearer ${t}`;
    if (json !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`${server.url}${path}`, { method: method as any, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  };
}

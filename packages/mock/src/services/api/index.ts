import { bearerChallenge } from '../../bearer.js';
import { createHash } from 'node:crypto';
import { MockError, type MockReply, type MockRequest } from '../../http.js';
import type { ServiceModule } from '../../service.js';
import { own } from '@opsctl/shared/lookup.js';
import { clients } from '../oauth/common.js';
import { SCOPE_BASE, type OAuthClient } from '../oauth/registry.js';
import { bearerToken, checkAccessToken, type AccessTokenRecord } from '../oauth/tokens.js';

/** Scopes that allow reading channels. */
const READ_SCOPES = ['media', 'media.readonly', 'media.force-ssl', 'mediapartner'].map((s) => `${SCOPE_BASE}/${s}`);
const PARTS = ['id', 'snippet', 'contentDetails', 'statistics', 'status', 'brandingSettings'];
const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
};

/**
 * The data API is not enabled for the client's project: 403 PERMISSION_DENIED, reason accessNotConfigured
 * (domain usageLimits) with an ErrorInfo SERVICE_DISABLED naming the project, as Google's APIs answer it.
 */
function serviceDisabled(client: OAuthClient): MockError {
  const project = client.project_number ?? client.client_id.split(/[-.]/)[0] ?? client.client_id;
  const enable = `https://console.developers.google.com/apis/api/media.googleapis.com/overview?project=${encodeURIComponent(project)}`;
  return new MockError(
    403,
    'accessNotConfigured',
    `The media data API has not been used in project ${project} before or it is disabled. Enable it by visiting ${enable} then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.`,
    {
      domain: 'usageLimits',
      extendedHelp: enable,
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'SERVICE_DISABLED',
          domain: 'googleapis.com',
          metadata: { service: 'media.googleapis.com', consumer: `projects/${project}`, activationUrl: enable },
        },
      ],
    },
  );
}

/** Google's error shape: `{error: {code, message, status, errors: [{reason, domain, message}]}}`. */
function errorReply(err: MockError): MockReply {
  const headers: Record<string, string> = {};
  // RFC 6750 §3.1: no error code when the request carried no credentials (code `required`)
  if (err.status === 401) headers['www-authenticate'] = bearerChallenge('mock', err.code === 'required' ? {} : { error: 'invalid_token' });
  if (err.status === 403 && err.code === 'insufficientPermissions')
    headers['www-authenticate'] = bearerChallenge('mock', { error: 'insufficient_scope', scope: READ_SCOPES.join(' ') });
  return {
    status: err.status,
    json: {
      error: {
        code: err.status,
        message: err.message,
        status: STATUS[err.status] ?? 'UNKNOWN',
        errors: [
          {
            message: err.message,
            domain: typeof err.extra.domain === 'string' ? err.extra.domain : 'global',
            reason: err.code,
            ...(err.extra.extendedHelp ? { extendedHelp: err.extra.extendedHelp } : {}),
          },
        ],
        ...(err.extra.details ? { details: err.extra.details } : {}),
      },
    },
    headers,
  };
}

function channelFor(r: AccessTokenRecord, parts: string[]): Record<string, unknown> {
  const id = `UC${createHash('sha256').update(r.sub).digest('base64url').slice(0, 22)}`;
  const etag = createHash('sha1')
    .update(id + parts.join(','))
    .digest('base64url');
  const name = r.email.split('@')[0];
  const ch: Record<string, unknown> = { kind: 'media#channel', etag, id };
  if (parts.includes('snippet'))
    ch.snippet = {
      title: `${name}'s channel`,
      description: `The mock channel of ${r.email}`,
      customUrl: `@${name}`,
      publishedAt: '2020-01-01T00:00:00Z',
      country: 'US',
    };
  if (parts.includes('contentDetails')) ch.contentDetails = { relatedPlaylists: { likes: '', uploads: `UU${id.slice(2)}` } };
  if (parts.includes('statistics')) ch.statistics = { viewCount: '1024', subscriberCount: '42', hiddenSubscriberCount: false, videoCount: '7' };
  if (parts.includes('status')) ch.status = { privacyStatus: 'public', isLinked: true, longUploadsStatus: 'allowed' };
  if (parts.includes('brandingSettings')) ch.brandingSettings = { channel: { title: `${name}'s channel` } };
  return ch;
}

/** The data API: `GET /media/v3/channels?part=…&mine=true` with a bearer token from the oauth mock. */
const apiService: ServiceModule = {
  name: 'api',
  initState() {
    return false;
  },
  create(ctx) {
    return {
      errorReply,
      async authenticate(req: MockRequest) {
        const token = bearerToken(req.headers, req.query);
        const { check, client } = await ctx.store.read((s) => {
          const check = checkAccessToken(s, token, ctx.now());
          return { check, client: check.ok ? own(clients(s), check.record.client_id) : undefined };
        });
        if (!check.ok) {
          throw check.reason === 'missing'
            ? new MockError(401, 'required', 'Request is missing required authentication credential. Expected OAuth 2 access token.')
            : new MockError(401, 'authError', `Request had invalid authentication credentials: the access token is ${check.reason}.`);
        }
        // The seed's prerequisite: the data API is enabled for the project of the client the token was issued to.
        if (client?.data_api_enabled === false) throw serviceDisabled(client);
        req.auth = check.record;
      },
      routes: [
        {
          method: 'GET',
          path: '/media/v3/channels',
          handler: (req) => {
            const record = req.auth as AccessTokenRecord;
            if (!record.scopes.some((s) => READ_SCOPES.includes(s))) {
              throw new MockError(
                403,
                'insufficientPermissions',
                `Request had insufficient authentication scopes: reading channels needs one of ${READ_SCOPES.join(', ')}.`,
              );
            }
            const partParam = req.query.get('part');
            if (!partParam) throw new MockError(400, 'required', "No value for the required parameter 'part'.");
            const parts = partParam.split(',').map((p) => p.trim());
            const bad = parts.filter((p) => !PARTS.includes(p));
            if (bad.length) throw new MockError(400, 'unknownPart', `'${bad.join(',')}' is not a valid part; use ${PARTS.join(', ')}.`);
            const mine = req.query.get('mine');
            const ids = req.query.get('id');
            if (mine !== 'true' && !ids) throw new MockError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: mine, id.');
            const own = channelFor(record, parts);
            const items = mine === 'true' || ids?.split(',').includes(String(own.id)) ? [own] : [];
            return {
              status: 200,
              json: { kind: 'media#channelListResponse', etag: String(own.etag), pageInfo: { totalResults: items.length, resultsPerPage: 5 }, items },
            };
          },
        },
      ],
    };
  },
};

export default apiService;

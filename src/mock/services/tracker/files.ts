import { files, linkedFiles } from '../../../tracker/resources.js';
import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, assign, nextId, nowIso, tracker, unprocessable, type TrackerState } from './common.js';
import { crudRoutes } from './crud.js';

/** The largest multipart upload the mock accepts unless `options.tracker.maxUploadBytes` says otherwise. */
export const DEFAULT_MAX_UPLOAD_BYTES = 32 * 1024 * 1024;

const MENTIONS = { group_mention_ids: [], member_mention_ids: [], mention_ids: [] };

function attach(t: TrackerState, fileField: 'file_ids' | 'linked_file_ids', fileId: number, storyId: number | null | undefined): number[] {
  if (storyId === undefined || storyId === null) return [];
  const story = t.stories.find((s: any) => s.id === storyId);
  if (!story) throw unprocessable(`story_id: story ${storyId} does not exist`, 'story_id');
  if (!story[fileField].includes(fileId)) story[fileField].push(fileId);
  return [storyId];
}

/** Parses a multipart upload with the WHATWG parser: file0 (required) … file3, and story_id. */
async function parseUpload(req: MockRequest): Promise<{ storyId?: number; parts: File[] }> {
  if (!req.contentType.includes('multipart/form-data')) throw new MockError(400, 'schema_mismatch', 'schema mismatch: upload files as multipart/form-data (file0 … file3)');
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(req.rawBody), { headers: { 'content-type': req.contentType } }).formData();
  } catch (err) {
    throw new MockError(400, 'schema_mismatch', `schema mismatch: the multipart body cannot be parsed (${(err as Error).message})`);
  }
  const known = new Set(['story_id', 'file0', 'file1', 'file2', 'file3']);
  for (const key of form.keys()) if (!known.has(key)) throw new MockError(400, 'schema_mismatch', `schema mismatch: unknown form field "${key}" (use file0 … file3 and story_id)`);
  const parts: File[] = [];
  for (const key of ['file0', 'file1', 'file2', 'file3']) {
    const v = form.get(key);
    if (v === null) continue;
    if (typeof v === 'string') throw new MockError(400, 'schema_mismatch', `schema mismatch: ${key} must be a file part with a filename`);
    parts.push(v as File);
  }
  if (!form.get('file0')) throw new MockError(400, 'schema_mismatch', 'schema mismatch: file0 is required');
  const rawStory = form.get('story_id');
  if (rawStory !== null && (typeof rawStory !== 'string' || !/^\d+$/.test(rawStory))) throw new MockError(400, 'schema_mismatch', 'schema mismatch: story_id must be an integer');
  for (const p of parts) if (p.name.length > 1024) throw new MockError(413, 'string_too_long', `a string exceeded its length limit: file name must be at most 1024 characters`);
  return { storyId: rawStory === null ? undefined : Number(rawStory), parts };
}

export function fileRoutes(ctx: ServiceContext): Route[] {
  const uploaded = crudRoutes(ctx, {
    spec: files,
    coll: 'files',
    entityType: 'file',
    routes: ['list', 'get', 'update', 'delete'],
    change(f, body) {
      // the content never changes: only the descriptive fields
      assign(f, body, ['name', 'description', 'external_id', 'uploader_id', 'created_at']);
    },
    beforeDelete(t, f) {
      for (const s of t.stories) s.file_ids = s.file_ids.filter((x: number) => x !== f.id);
    },
  });
  uploaded.push({
    method: 'POST',
    path: `${API}/files`,
    // Uploads have their own, larger limit than the JSON routes (`options.tracker.maxUploadBytes`).
    maxBodyBytes: ctx.options.tracker?.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    handler: async (req) => {
      const { storyId, parts } = await parseUpload(req);
      const sizes = await Promise.all(parts.map(async (p) => (await p.arrayBuffer()).byteLength));
      return reply.created(await ctx.store.write((s) => {
        const t = tracker(s);
        const at = nowIso(ctx.now());
        return parts.map((p, i) => {
          const id = nextId(t);
          const f = {
            id, name: p.name, filename: p.name, description: null, content_type: p.type || 'application/octet-stream', external_id: null, size: sizes[i],
            story_ids: attach(t, 'file_ids', id, storyId), thumbnail_url: null, url: `${APP_URL}/files/${id}/${encodeURIComponent(p.name)}`, uploader_id: t.ownerId,
            ...MENTIONS, entity_type: 'file', created_at: at, updated_at: at,
          };
          t.files.push(f);
          return { ...f };
        });
      }));
    },
  });
  const linked = crudRoutes(ctx, {
    spec: linkedFiles,
    coll: 'linkedFiles',
    entityType: 'linked-file',
    make(body, t) {
      return {
        name: body.name, url: body.url, type: body.type, description: body.description ?? null, content_type: body.content_type ?? null, size: body.size ?? null,
        thumbnail_url: body.thumbnail_url ?? null, uploader_id: body.uploader_id ?? t.ownerId, story_ids: [], pending_story_id: body.story_id, ...MENTIONS,
      };
    },
    change(f, body, t) {
      assign(f, body, ['name', 'url', 'type', 'description', 'size', 'thumbnail_url', 'uploader_id']);
      if (body.story_id !== undefined) f.story_ids = [...new Set([...f.story_ids, ...attach(t, 'linked_file_ids', f.id, body.story_id)])];
    },
    after(t, f) {
      if (f.pending_story_id !== undefined) f.story_ids = attach(t, 'linked_file_ids', f.id, f.pending_story_id);
      delete f.pending_story_id;
    },
    beforeDelete(t, f) {
      for (const s of t.stories) s.linked_file_ids = s.linked_file_ids.filter((x: number) => x !== f.id);
    },
  });
  return [...uploaded, ...linked];
}

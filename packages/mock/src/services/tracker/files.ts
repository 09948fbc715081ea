import { files } from '@opsctl/shared/tracker/resources/files.js';
import { linkedFiles } from '@opsctl/shared/tracker/resources/linked-files.js';
import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, assign, maxUploadBytes, nextId, nowIso, tracker, unprocessable, type TrackerState } from './common.js';
import type { FileBody, LinkedFileBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { TrackerFile } from './records.js';

const MENTIONS = { group_mention_ids: [], member_mention_ids: [], mention_ids: [] };

function attach(t: TrackerState, fileField: 'file_ids' | 'linked_file_ids', fileId: number, storyId: number | null | undefined): number[] {
  if (storyId === undefined || storyId === null) return [];
  const story = t.stories.find((s) => s.id === storyId);
  if (!story) throw unprocessable(`story_id: story ${storyId} does not exist`, 'story_id');
  if (!story[fileField].includes(fileId)) story[fileField].push(fileId);
  return [storyId];
}

interface UploadedPart {
  name: string;
  type: string;
  size: number;
}

const FILE_FIELDS = ['file0', 'file1', 'file2', 'file3'];
const schema = (message: string) => new MockError(400, 'schema_mismatch', `schema mismatch: ${message}`);

/**
 * Parses a multipart upload as it arrives (busboy): file0 (required) … file3 and story_id. The mock
 * keeps no content, so each file is counted and discarded as it streams: memory stays flat whatever
 * the size. More than `maxBytes` in all is a 413.
 */
async function parseUpload(req: MockRequest, maxBytes: number): Promise<{ storyId?: number; parts: UploadedPart[] }> {
  if (!req.contentType.includes('multipart/form-data')) throw schema('upload files as multipart/form-data (file0 … file3)');
  const source = req.stream;
  if (!source) throw new Error('the upload route needs its body as a stream (streamBody)');
  const { default: busboy } = await import('busboy');
  let bb: ReturnType<typeof busboy>;
  try {
    bb = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: FILE_FIELDS.length, fields: 1, fieldSize: 64 } });
  } catch (err) {
    throw schema(`the multipart body cannot be parsed (${(err as Error).message})`);
  }
  const parts = new Map<string, UploadedPart>();
  let storyRaw: string | undefined;
  return new Promise((resolve, reject) => {
    let done = false;
    let received = 0;
    const fail = (err: MockError) => {
      if (done) return;
      done = true;
      // stop parsing; the rest of the body is read and dropped by the HTTP server after the reply
      source.unpipe(bb);
      reject(err);
    };
    source.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes)
        fail(
          new MockError(413, 'too_large', `request body is larger than ${maxBytes} bytes (the limit of ${req.path}): send fewer or smaller files per request`),
        );
    });
    source.on('error', (err) => fail(schema(`the upload was cut off (${err.message})`)));
    bb.on('file', (field, stream, info) => {
      stream.resume();
      if (!FILE_FIELDS.includes(field)) return fail(schema(`unknown form field "${field}" (use file0 … file3 and story_id)`));
      if (parts.has(field)) return fail(schema(`${field} is given twice`));
      if (!info.filename) return fail(schema(`${field} must be a file part with a filename`));
      if (info.filename.length > 1024)
        return fail(new MockError(413, 'string_too_long', 'a string exceeded its length limit: file name must be at most 1024 characters'));
      const part: UploadedPart = { name: info.filename, type: info.mimeType, size: 0 };
      parts.set(field, part);
      stream.on('data', (chunk: Buffer) => (part.size += chunk.length));
    });
    bb.on('field', (name, value) => {
      if (FILE_FIELDS.includes(name)) return fail(schema(`${name} must be a file part with a filename`));
      if (name !== 'story_id') return fail(schema(`unknown form field "${name}" (use file0 … file3 and story_id)`));
      storyRaw = value;
    });
    bb.on('filesLimit', () => fail(schema('at most 4 files (file0 … file3) per request')));
    bb.on('fieldsLimit', () => fail(schema('only one form field besides the files: story_id')));
    bb.on('error', (err) => fail(schema(`the multipart body cannot be parsed (${(err as Error).message})`)));
    bb.on('close', () => {
      if (done) return;
      if (!parts.has('file0')) return fail(schema('file0 is required'));
      if (storyRaw !== undefined && !/^\d{1,15}$/.test(storyRaw)) return fail(schema('story_id must be an integer'));
      done = true;
      resolve({ storyId: storyRaw === undefined ? undefined : Number(storyRaw), parts: FILE_FIELDS.flatMap((f) => parts.get(f) ?? []) });
    });
    source.pipe(bb);
  });
}

export function fileRoutes(ctx: ServiceContext): Route[] {
  const uploaded = crudRoutes<'files', FileBody>(ctx, {
    spec: files,
    coll: 'files',
    entityType: 'file',
    routes: ['list', 'get', 'update', 'delete'],
    change(f, body) {
      // the content never changes: only the descriptive fields
      assign(f, body, ['name', 'description', 'external_id', 'uploader_id', 'created_at']);
    },
    beforeDelete(t, f) {
      for (const s of t.stories) s.file_ids = s.file_ids.filter((x) => x !== f.id);
    },
  });
  const maxBytes = maxUploadBytes(ctx.options);
  uploaded.push({
    method: 'POST',
    path: `${API}/files`,
    // Uploads have their own, larger limit than the JSON routes (`options.tracker.maxUploadBytes`), and stream.
    maxBodyBytes: maxBytes,
    streamBody: true,
    handler: async (req) => {
      const { storyId, parts } = await parseUpload(req, maxBytes);
      return reply.created(
        await ctx.store.write((s) => {
          const t = tracker(s);
          const at = nowIso(ctx.now());
          return parts.map((p) => {
            const id = nextId(t);
            const f: TrackerFile = {
              id,
              name: p.name,
              filename: p.name,
              description: null,
              content_type: p.type || 'application/octet-stream',
              external_id: null,
              size: p.size,
              story_ids: attach(t, 'file_ids', id, storyId),
              thumbnail_url: null,
              url: `${APP_URL}/files/${id}/${encodeURIComponent(p.name)}`,
              uploader_id: t.ownerId,
              ...MENTIONS,
              entity_type: 'file',
              created_at: at,
              updated_at: at,
            };
            t.files.push(f);
            return { ...f };
          });
        }),
      );
    },
  });
  const linked = crudRoutes<'linkedFiles', LinkedFileBody>(ctx, {
    spec: linkedFiles,
    coll: 'linkedFiles',
    entityType: 'linked-file',
    make(body, t) {
      return {
        name: body.name,
        url: body.url,
        type: body.type,
        description: body.description ?? null,
        content_type: body.content_type ?? null,
        size: body.size ?? null,
        thumbnail_url: body.thumbnail_url ?? null,
        uploader_id: body.uploader_id ?? t.ownerId,
        story_ids: [],
        pending_story_id: body.story_id,
        ...MENTIONS,
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
      for (const s of t.stories) s.linked_file_ids = s.linked_file_ids.filter((x) => x !== f.id);
    },
  });
  return [...uploaded, ...linked];
}

import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import type { Context } from '../../context.js';
import { InterruptedError, PartialError, UsageError, ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { API_PREFIX } from '../../tracker/client.js';
import { files as spec } from '../../tracker/resources.js';
import { columns, handleInterrupts, trackerClient } from './shared.js';

export interface UploadOptions {
  files: string[];
  story?: string;
}

/** The API takes file0 … file3 in one request. */
export const FILES_PER_REQUEST = 4;

const TYPES: Record<string, string> = {
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.txt': 'text/plain', '.log': 'text/plain',
  '.md': 'text/markdown', '.json': 'application/json', '.pdf': 'application/pdf', '.csv': 'text/csv', '.yaml': 'application/yaml', '.yml': 'application/yaml',
};

/** `opsctl tracker files upload FILE… [--story ID]`: multipart uploads, 4 files per request. */
export async function run(opts: UploadOptions, ctx: Context): Promise<CommandResult> {
  if (opts.files.length === 0) throw new UsageError('give at least one file to upload');
  if (opts.story !== undefined && !/^\d{1,15}$/.test(opts.story)) throw new ValidationError('--story', `"${opts.story}" is not an integer story id`);
  // read everything first: a missing file stops the command before anything is sent
  const parts = await Promise.all(
    opts.files.map(async (f) => {
      const path = isAbsolute(f) ? f : join(ctx.cwd, f);
      const name = basename(f);
      if (name.length > 1024) throw new ValidationError(f, 'the file name is longer than 1024 characters');
      try {
        return { name, data: await readFile(path), type: TYPES[name.slice(name.lastIndexOf('.')).toLowerCase()] ?? 'application/octet-stream' };
      } catch (err) {
        throw new UsageError(`cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { field: 'files' });
      }
    }),
  );
  const http = (await trackerClient(ctx, spec)).http;
  const uploaded: unknown[] = [];
  const batches = Math.ceil(parts.length / FILES_PER_REQUEST);
  const progress = batches > 1 ? await ctx.io.progress(`uploading ${parts.length} files in ${batches} requests`) : undefined;
  // the FormData of the undici that sends it (Node's global one belongs to Node's own copy of undici);
  // its own module, as undici-lite does, and CommonJS: the bundle may hand the exports back as `default`
  // @ts-expect-error undici ships no declarations for its internal modules
  const mod = await import('undici/lib/web/fetch/formdata.js');
  const FormData = (mod.FormData ?? mod.default.FormData) as typeof import('undici').FormData;
  // Ctrl-C (or SIGTERM) between or during batches: report what is uploaded and what to upload again
  const signal = await handleInterrupts(ctx);
  const aborted = new Promise<'aborted'>((resolve) => signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
  const interrupted = (b: number, inFlight: boolean) => {
    progress?.fail();
    return new InterruptedError(
      `upload interrupted: ${uploaded.length} of ${parts.length} files uploaded` +
        (b * FILES_PER_REQUEST < parts.length ? `; upload the rest again${inFlight ? ' (the batch in flight may or may not have arrived: look with opsctl tracker files list)' : ''}: ${opts.files.slice(b * FILES_PER_REQUEST).join(' ')}` : ''),
    );
  };
  for (let b = 0; b < batches; b++) {
    if (signal.aborted) throw interrupted(b, false);
    const form = new FormData();
    if (opts.story !== undefined) form.append('story_id', opts.story);
    parts.slice(b * FILES_PER_REQUEST, (b + 1) * FILES_PER_REQUEST).forEach((p, i) => form.append(`file${i}`, new Blob([new Uint8Array(p.data)], { type: p.type }), p.name));
    try {
      const res = await Promise.race([http.request<unknown[]>({ method: 'POST', path: `${API_PREFIX}${spec.path}`, formData: form }), aborted]);
      if (res === 'aborted') throw interrupted(b, true);
      uploaded.push(...res.data);
    } catch (err) {
      if (uploaded.length === 0 || err instanceof InterruptedError) throw err;
      progress?.fail();
      throw new PartialError(`uploaded ${uploaded.length} of ${parts.length} files, then: ${(err as Error).message}`, {
        hint: `upload the rest again: ${opts.files.slice(b * FILES_PER_REQUEST).join(' ')}`,
        summary: { uploaded },
      });
    }
    progress?.update(`uploaded ${uploaded.length}/${parts.length}`);
  }
  progress?.stop();
  return { data: uploaded, columns: columns(spec.columns), message: `uploaded ${uploaded.length} file${uploaded.length === 1 ? '' : 's'}` };
}

import { openAsBlob } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { refuseKernelFile } from '../../core/kernel-path.js';
import { basename, isAbsolute, join } from 'node:path';
import type { Context } from '../../context.js';
import { ApiError, InterruptedError, NetworkError, OpsError, PartialError, UsageError, ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { API_PREFIX } from '../../tracker/client.js';
import { files as spec } from '@opsctl/shared/tracker/resources/files.js';
import { formatSize, parseSize } from '@opsctl/shared/size.js';
import { planBatches, UPLOAD_REQUEST_LIMIT_BYTES } from '../../tracker/upload.js';
import { columns, handleInterrupts, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { uploadSpec } from './upload.spec.js';

export type UploadOptions = OptionsOf<ReturnType<typeof uploadSpec>>;

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.csv': 'text/csv',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};

interface LocalFile {
  /** As the user wrote it (for "upload the rest again: …"). */
  arg: string;
  path: string;
  name: string;
  type: string;
  size: number;
}

/**
 * `opsctl tracker files upload FILE… [--story ID]`: multipart requests of at most 4 files and at most
 * the upload limit in bytes, each file streamed from disk (a file-backed Blob: nothing is read whole
 * into memory). On a failure or Ctrl-C it names the ids already uploaded and the files to send again.
 */
export async function run(opts: UploadOptions, ctx: Context): Promise<CommandResult> {
  if (opts.files.length === 0) throw new UsageError('give at least one file to upload');
  if (opts.story !== undefined && !/^\d{1,15}$/.test(opts.story)) throw new ValidationError('--story', `"${opts.story}" is not an integer story id`);
  const limitSpec = ctx.env.OPSCTL_TRACKER_UPLOAD_LIMIT;
  const limit = limitSpec === undefined || limitSpec === '' ? UPLOAD_REQUEST_LIMIT_BYTES : parseSize(limitSpec);
  if (!limit) throw new UsageError(`OPSCTL_TRACKER_UPLOAD_LIMIT: "${limitSpec}" is not a size`, { hint: 'write it like 50MB, 512KB or a number of bytes' });
  // look at every file first: a missing one (or a directory) stops the command before anything is sent
  const local = await Promise.all(opts.files.map((f) => inspect(f, ctx.cwd)));

  const http = (await trackerClient(ctx, spec)).http;
  // the FormData of the undici that sends it (Node's global one belongs to Node's own copy of undici);
  // its own module, as undici-lite does, and CommonJS: the bundle may hand the exports back as `default`
  // @ts-expect-error undici ships no declarations for its internal modules
  const mod = (await import('undici/lib/web/fetch/formdata.js')) as {
    FormData?: typeof import('undici').FormData;
    default?: { FormData?: typeof import('undici').FormData };
  };
  const FormData = mod.FormData ?? mod.default?.FormData;
  if (!FormData) throw new Error('undici/lib/web/fetch/formdata.js exports no FormData');

  // planBatches keeps the order given: each batch is the files at its indexes
  const queue = planBatches(
    local.map((f) => f.size),
    limit,
  ).map((batch) => local.filter((_, i) => batch.includes(i)));
  const uploaded: Array<Record<string, unknown>> = [];
  const progress = queue.length > 1 ? ctx.io.progress(`uploading ${local.length} files in ${queue.length} requests`) : undefined;
  // Ctrl-C (or SIGTERM) between or during batches: report what is uploaded and what to upload again
  const signal = await handleInterrupts(ctx);
  const aborted = new Promise<'aborted'>((resolve) => signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
  const ids = () => (uploaded.length ? `; uploaded ids: ${uploaded.map((f) => f.id).join(', ')}` : '');
  const rest = () =>
    queue
      .flat()
      .map((f) => f.arg)
      .join(' ');

  // the head of the queue until it is empty: shifted once sent, split in place on a 413
  for (let batch = queue[0]; batch !== undefined; batch = queue[0]) {
    if (signal.aborted) throw interrupted({ inFlight: false });
    const form = new FormData();
    if (opts.story !== undefined) form.append('story_id', opts.story);
    for (const [i, f] of batch.entries()) form.append(`file${i}`, await openChecked(f), f.name);
    try {
      const res = await Promise.race([
        http.request<Array<Record<string, unknown>>>({ method: 'POST', path: `${API_PREFIX}${spec.path}`, formData: form }),
        aborted,
      ]);
      if (res === 'aborted') throw interrupted({ inFlight: true });
      uploaded.push(...res.data);
      queue.shift();
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      if (err instanceof ApiError && err.status === 413 && batch.length > 1) {
        // the server takes less per request than we thought: the same files, one per request
        ctx.io.warn(`the server refused ${batch.length} files (${formatSize(total(batch))}) in one request (413): sending them one per request`);
        queue.splice(0, 1, ...batch.map((f) => [f]));
        continue;
      }
      progress?.fail();
      throw failed(err as Error, batch);
    }
    progress?.update(`uploaded ${uploaded.length}/${local.length}`);
  }
  progress?.stop();
  return { data: uploaded, columns: columns(spec.columns), message: `uploaded ${uploaded.length} file${uploaded.length === 1 ? '' : 's'}` };

  function interrupted({ inFlight }: { inFlight: boolean }): InterruptedError {
    progress?.fail();
    return new InterruptedError(
      `upload interrupted: ${uploaded.length} of ${local.length} files uploaded` +
        (queue.length
          ? `; upload the rest again${inFlight ? ' (the batch in flight may or may not have arrived: look with opsctl tracker files list)' : ''}: ${rest()}`
          : '') +
        ids(),
    );
  }

  function failed(err: Error, batch: LocalFile[]): OpsError {
    const tooLarge = err instanceof ApiError && err.status === 413;
    // a 413 on a batch of several files splits it (above): one on a single file fails here
    const [file] = batch;
    const why = tooLarge && file ? `${file.arg} (${formatSize(file.size)}) is larger than the server takes in one request: ${err.message}` : err.message;
    // a server that closes the connection on a body it will not take shows up as a broken pipe
    const cutOff = err instanceof NetworkError && /EPIPE|ECONNRESET|other side closed/i.test(err.message);
    const hint = tooLarge
      ? 'the file cannot be uploaded to this server as it is: split or compress it'
      : cutOff
        ? `the server closed the connection while the request (${formatSize(total(batch))}) was being sent: if it limits uploads, set OPSCTL_TRACKER_UPLOAD_LIMIT below that (now ${formatSize(limit!)})`
        : undefined;
    if (uploaded.length === 0) {
      if (cutOff) return new OpsError(`nothing uploaded: ${why}`, 1, { code: 'network', hint, cause: err });
      if (!tooLarge) return err instanceof OpsError ? err : new OpsError(why, 1, { cause: err });
      return new OpsError(`nothing uploaded: ${why}`, 1, { code: 'too_large', hint, cause: err });
    }
    return new PartialError(`uploaded ${uploaded.length} of ${local.length} files${ids()}; then: ${why}`, {
      hint: `${hint ? `${hint}; ` : ''}upload the rest again: ${rest()}`,
      summary: { uploaded, not_uploaded: queue.flat().map((f) => f.arg) },
      cause: err,
    });
  }
}

/** The file as a disk-backed Blob, judged again as it is opened (a path swapped for a link into /proc since the first look is refused). */
async function openChecked(f: LocalFile): Promise<Blob> {
  await refuseKernelFile(f.path, f.arg, { what: 'cannot upload', field: 'files', hint: 'give files of your own' });
  const st = await stat(f.path);
  if (!st.isFile() || st.size !== f.size)
    throw new UsageError(`cannot upload ${f.arg}: it changed while the upload ran`, { field: 'files', hint: 'upload it again once it no longer changes' });
  return openAsBlob(f.path, { type: f.type });
}

function kindOf(st: Stats): string {
  return st.isDirectory()
    ? 'a directory'
    : st.isFIFO()
      ? 'a pipe'
      : st.isSocket()
        ? 'a socket'
        : st.isCharacterDevice() || st.isBlockDevice()
          ? 'a device'
          : 'not a file';
}

function total(batch: LocalFile[]): number {
  return batch.reduce((n, f) => n + f.size, 0);
}

async function inspect(arg: string, cwd: string): Promise<LocalFile> {
  const path = isAbsolute(arg) ? arg : join(cwd, arg);
  const name = basename(arg);
  if (name.length > 1024) throw new ValidationError(arg, 'the file name is longer than 1024 characters');
  let size: number;
  let real: string;
  try {
    // /proc/self/environ is a "regular file" of size 0 that holds opsctl's own tokens: judged where it leads
    real = await refuseKernelFile(path, arg, { what: 'cannot upload', field: 'files', hint: 'give files of your own (copy what you need into a file first)' });
    const st = await stat(real);
    if (!st.isFile())
      throw new UsageError(`cannot upload ${arg}: it is not a regular file (${kindOf(st)})`, {
        field: 'files',
        hint: 'give regular files, not directories, devices, pipes or sockets',
      });
    size = st.size;
    await access(real, constants.R_OK);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${arg}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { field: 'files' });
  }
  return { arg, path: real, name, size, type: TYPES[name.slice(name.lastIndexOf('.')).toLowerCase()] ?? 'application/octet-stream' };
}

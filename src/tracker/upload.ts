/** The API takes file0 … file3 in one request. */
export const FILES_PER_REQUEST = 4;

// The largest upload request: shared with the mock's upload route (packages/shared/src/tracker/limits.ts).
export { UPLOAD_REQUEST_LIMIT_BYTES } from '@opsctl/shared/tracker/limits.js';

/** Room per part for its multipart headers (boundary, Content-Disposition with the name, Content-Type). */
export const PART_OVERHEAD_BYTES = 1024;

/**
 * Splits files (in the order given) into upload requests: at most FILES_PER_REQUEST each, and together
 * (with each part's headers) at most `limit` bytes. A file larger than the limit goes alone (the
 * server then says whether it takes it). Returns the indexes of each batch.
 */
export function planBatches(sizes: readonly number[], limit: number, perRequest = FILES_PER_REQUEST): number[][] {
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  sizes.forEach((size, i) => {
    const cost = size + PART_OVERHEAD_BYTES;
    if (current.length > 0 && (current.length >= perRequest || bytes + cost > limit)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(i);
    bytes += cost;
  });
  if (current.length) batches.push(current);
  return batches;
}

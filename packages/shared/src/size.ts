/**
 * Byte sizes, read and said one way: binary units (1 KiB = 1024 bytes) both ways. `parseSize` reads a flag's
 * or a variable's size (`--rehearsal-max-copy 2GiB`, `--max-upload 200MB`), `formatSize` says one in a message
 * (a backup's space, a copy's size, what a defragmentation freed, an upload's request).
 */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** `50MB`, `512k`, `1.5GiB`, `1048576` → bytes (binary units: 1 KB = 1024 bytes); undefined if unreadable. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const bytes = Math.floor(Number(m[1]) * { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit as 'b' | 'k' | 'm' | 'g']);
  return bytes > 0 ? bytes : undefined;
}

/**
 * Bytes for a message, in the largest binary unit under which they are at least 1, to one decimal and
 * without a trailing `.0`: 512 → "512 B", 31457280 → "30 MiB", 949678490 → "905.7 MiB", 2.4 GiB → "2.4 GiB".
 */
export function formatSize(bytes: number): string {
  let u = 0;
  while (u < UNITS.length - 1 && Math.abs(bytes) >= 1024 ** (u + 1)) u++;
  if (u === 0) return `${bytes} B`;
  let v = +(bytes / 1024 ** u).toFixed(1);
  // (1023.96 KiB rounds to 1024: said as the next unit's 1)
  if (Math.abs(v) >= 1024 && u < UNITS.length - 1) v = +(bytes / 1024 ** ++u).toFixed(1);
  return `${v} ${UNITS[u]}`;
}

import { UsageError } from '../../core/errors.js';

/** A uint64 id (decimal, as the gateway writes it) as etcdctl prints it: hex, no padding. */
export function hex(id: string | undefined): string {
  return id ? BigInt(id).toString(16) : '0';
}

/** A lease id as etcdctl prints it: 16 hex digits. */
export function leaseHex(id: string | undefined): string {
  return hex(id).padStart(16, '0');
}

/** A member id as etcdctl's `%16x` prints it: hex, right-aligned in 16 columns. */
export function memberHex16(id: string | undefined): string {
  return hex(id).padStart(16, ' ');
}

/** An id typed by a person: hex as etcdctl prints it (`694d77aa9e38260f`), or `0x…`, or decimal with --decimal habits (`#123`). */
export function parseId(text: string, what: string): string {
  const s = text.trim();
  const m = /^(?:0x)?([0-9a-f]{1,16})$/i.exec(s);
  if (m) return BigInt(`0x${m[1]}`).toString();
  if (/^#\d+$/.test(s) && BigInt(s.slice(1)) < 2n ** 64n) return BigInt(s.slice(1)).toString();
  throw new UsageError(`${what}: "${s}" is not an id`, {
    field: what,
    hint: `give it in hex as etcdctl prints it (e.g. 694d77aa9e38260f), or in decimal after # (e.g. #7587869440520062479)`,
  });
}

export function b64(s: string | Buffer): string {
  return Buffer.from(s).toString('base64');
}

export function unb64(s: unknown): string {
  return typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '';
}

/** The end of a prefix range, base64 for the gateway: the prefix with its last byte raised (etcdctl's GetPrefixRangeEnd); "\0" (every key from the start) for an empty prefix. */
export function prefixEnd64(prefix: string): string {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const out = Buffer.from(b.subarray(0, i + 1));
      out[i] = b[i]! + 1;
      return out.toString('base64');
    }
  }
  return Buffer.from([0]).toString('base64');
}

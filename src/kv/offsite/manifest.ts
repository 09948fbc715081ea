/** What is written beside each uploaded snapshot, last: a snapshot without one is not a backup. */
export interface OffsiteManifest {
  kind: 'opsctl-kv-snapshot';
  key: string;
  bytes: number;
  sha256: string;
  revision: string;
  endpoint?: string;
  /** The upgrade run and hop it belongs to, when an upgrade took it. */
  run?: string;
  label?: string;
  createdAt: string;
  /**
   * The checksum the store gave for the object when it was uploaded and verified (its algorithm and the
   * header's text as given): a later look that gets another value from the store sees a changed object.
   * Absent when the store keeps none.
   */
  storeChecksum?: { algorithm: string; value: string };
  /** How the upload was verified on the store: its own checksum of what it received, or the object read back. */
  verifiedBy?: 'store-checksum' | 'read-back';
}

export const MANIFEST_SUFFIX = '.manifest.json';

/** A manifest's text read and checked (for KEY); undefined when it is not one of opsctl's. */
export function parseManifest(text: string, key: string): OffsiteManifest | undefined {
  try {
    const m = JSON.parse(text) as Partial<OffsiteManifest>;
    if (m.kind !== 'opsctl-kv-snapshot' || typeof m.key !== 'string' || m.key + MANIFEST_SUFFIX !== key) return undefined;
    if (typeof m.bytes !== 'number' || !Number.isSafeInteger(m.bytes) || m.bytes < 0) return undefined;
    if (typeof m.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(m.sha256)) return undefined;
    if (typeof m.createdAt !== 'string' || typeof m.revision !== 'string') return undefined;
    const c = m.storeChecksum;
    if (c !== undefined && (typeof c !== 'object' || c === null || typeof c.algorithm !== 'string' || typeof c.value !== 'string')) delete m.storeChecksum;
    return m as OffsiteManifest;
  } catch {
    return undefined;
  }
}

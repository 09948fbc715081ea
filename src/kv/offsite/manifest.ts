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
}

export const MANIFEST_SUFFIX = '.manifest.json';

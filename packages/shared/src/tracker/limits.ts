/**
 * The largest upload request opsctl sends, and the mock's default limit on its upload route: 50 MiB.
 * A real tracker may differ: OPSCTL_TRACKER_UPLOAD_LIMIT (or the profile's tracker_upload_limit)
 * sets it, and a 413 for a batch of several files is retried one file per request anyway.
 */
export const UPLOAD_REQUEST_LIMIT_BYTES = 50 * 1024 * 1024;

/** The flag sets the kv verbs' specs share (light: the specs are loaded for --help). */

import { CYCLING_VERBS, TEMPLATE_ROWS, type CyclingVerb, type DRIVER_TEMPLATES, type TemplateKey, type TemplateRow } from '../../../kv/cluster/cluster-file.js';

// (the etcdctl-like verbs' own, apart: they need no template table)
export { cluster, etcdctlLike, perMember, writeOut } from './cluster-flags.js';

type Rows = typeof DRIVER_TEMPLATES;
/** A template's flag: `--stop-cmd <template>`. */
interface TemplateFlag {
  readonly type: 'string';
  readonly value: 'template';
  readonly help: string;
}
type FlagsOf<K extends TemplateKey> = { readonly [P in K as Rows[P]['flag']]: TemplateFlag };
/** The templates every verb that stops and starts members takes. */
type Shared = { [K in TemplateKey]: CyclingVerb extends Rows[K]['verbs'][number] ? K : never }[TemplateKey];
/** The templates VERB takes beside the shared ones. */
type Own<V extends CyclingVerb> = { [K in TemplateKey]: V extends Rows[K]['verbs'][number] ? (K extends Shared ? never : K) : never }[TemplateKey];

const shared = (row: TemplateRow) => CYCLING_VERBS.every((v) => row.verbs.includes(v));

/** The flags of the table's rows that PICK keeps, in the table's order. */
function templateFlags(pick: (row: TemplateRow) => boolean): Record<string, TemplateFlag> {
  return Object.fromEntries(TEMPLATE_ROWS.filter(([, row]) => pick(row)).map(([, row]) => [row.flag, { type: 'string', value: 'template', help: row.help }]));
}

/** The templates only some verbs take (`kv restore --restore-cmd`, `kv upgrade --drop-backup-cmd`), as that verb's flags. */
export function verbTemplates<V extends CyclingVerb>(verb: V): FlagsOf<Own<V>> {
  return templateFlags((row) => row.verbs.includes(verb) && !shared(row)) as FlagsOf<Own<V>>;
}

/** The command driver's templates (kv/cluster/cluster-file.ts DRIVER_TEMPLATES) and the member timeouts: the verbs that stop and start members. */
export const driver = {
  ...(templateFlags(shared) as FlagsOf<Shared>),
  stopTimeout: { type: 'string', value: 'duration', help: 'how long a stopping member may take', default: '60s' },
  healthyTimeout: { type: 'string', value: 'duration', help: 'how long a started member may take to be healthy and caught up', default: '2m' },
  pollInterval: { type: 'string', value: 'duration', help: 'between health polls', default: '250ms' },
} as const;

/** `--trial-timeout` of the verbs that try the target binary with each member's settings first (upgrade, downgrade). */
export const trialTimeout = {
  type: 'string',
  value: 'duration',
  help: "how long the target binary may take to serve /health in its trial start with a member's settings",
  default: '30s',
} as const;

/** `--dry-run` of the verbs that print their plan. */
export const dryRun = { type: 'boolean', help: 'print the plan and stop' } as const;

/** `--target-bin`, repeatable (`3.4=DIR` per hop). */
export const targetBin = (help: string) => ({ type: 'list', value: '[version=]dir', repeat: true, home: true, help }) as const;

/** The snapshot flags of a rolling run (kv upgrade, kv downgrade). */
export const snapshotVia = { type: 'string', value: 'how', help: 'auto | etcdctl | gateway', default: 'auto' } as const;
export const etcdctl = { type: 'string', value: 'path', home: true, help: 'the etcdctl to use for snapshots' } as const;
export const snapshotTimeout = {
  type: 'string',
  value: 'duration',
  help: 'timeout of one snapshot; with --backup-to, also of its upload (every request to the store, retries and clean-up included)',
  default: '2m',
} as const;
export const keepBackups = {
  type: 'boolean',
  help: "keep every backup of the run once its hop is done: each member's data-dir copy and every member's snapshot (by default only the restore point stays: the hop's verified way back)",
} as const;
/** `--cache` of the release verbs. */
export const cache = { type: 'string', value: 'dir', home: true, help: "the release cache (default: opsctl's data directory, cache/etcd-releases)" } as const;

/** `kv backups list|prune --from s3://…`: the backups uploaded there instead of those on this host. */
export const backupsFrom = {
  from: {
    type: 'string',
    value: 's3://bucket/prefix',
    help: 'the backups uploaded there (kv snapshot save --to, kv upgrade --backup-to) instead of those on this host',
  },
} as const;

/** How an s3:// place is reached, as the AWS CLI takes it (unset: AWS_PROFILE, AWS_ENDPOINT_URL, AWS_REGION, ~/.aws/config). */
export const s3 = {
  awsProfile: { type: 'string', value: 'name', help: 'S3: the profile of ~/.aws/credentials and ~/.aws/config (env AWS_PROFILE)' },
  endpointUrl: { type: 'string', value: 'url', help: 'S3: the endpoint of an S3-compatible store (env AWS_ENDPOINT_URL)' },
  region: { type: 'string', value: 'name', help: 'S3: the region (env AWS_REGION; default us-east-1)' },
  s3Timeout: {
    type: 'string',
    value: 'duration',
    help: 'S3: the longest one request to the store may take (connect, each part, complete, head, list, get; a download: between two chunks), retried with back-off',
    default: '30s',
  },
} as const;

import type { Context } from '../../../context.js';
import { ValidationError } from '../../../core/errors.js';
import { LabelsClient } from '../../../labels/client.js';
import { LABEL_API_VERSIONS, type LabelApiVersion } from '../../../labels/schema.js';
import { parentName, parseGrant, principalKey, type Grant, type LabelRef } from '../../../labels/names.js';
import { resolveLabelRef } from '../../../labels/resolve.js';
import type { Choice, Field, Label, LabelPermission } from '../../../labels/types.js';

/** A client of the label service; `admin` sends useAdminAccess (the `--admin` flag). */
export async function labelsClient(ctx: Context, { admin = false }: { admin?: boolean } = {}): Promise<LabelsClient> {
  const client = new LabelsClient(await ctx.http('labels'));
  client.admin = admin;
  // the profile's labels_version: v2 unless it says v2beta (a value edited into config.json by hand is refused, named)
  const version = (await ctx.profile()).labels_version;
  if (version !== undefined) {
    if (!(LABEL_API_VERSIONS as readonly string[]).includes(version)) {
      throw new ValidationError(
        'labels_version',
        `"${version}" is not a label API version`,
        `use one of ${LABEL_API_VERSIONS.join(', ')}: opsctl config set labels_version v2`,
      );
    }
    client.version = version as LabelApiVersion;
  }
  return client;
}

/** A label as the user names it (id, labels/ID or exact title; src/labels/resolve.ts), as `labels/ID[@REV]`. */
export async function labelRef(client: LabelsClient, input: string): Promise<LabelRef> {
  return resolveLabelRef(client, input);
}

/** A label reference for a write: the label itself (a revision suffix other than @latest is refused). */
export async function writableRef(client: LabelsClient, input: string): Promise<LabelRef> {
  const ref = await resolveLabelRef(client, input);
  if (ref.rev && ref.rev !== 'latest') {
    throw new ValidationError('label', `changes apply to the label, not to revision @${ref.rev}`, `use labels/${ref.id}`);
  }
  return { id: ref.id };
}

/** A field of a label by id or display name. */
export function findField(label: Label, input: string): Field {
  const f = (label.fields ?? []).find((x) => x.id === input) ?? (label.fields ?? []).find((x) => x.properties?.displayName === input);
  if (!f) {
    const known = (label.fields ?? []).map((x) => `${x.properties?.displayName} (${x.id})`).join(', ') || 'none';
    throw new ValidationError('field', `labels/${label.id} has no field "${input}"`, `fields: ${known}`);
  }
  return f;
}

/** A selection field of a label by id or display name. */
export function selectionField(label: Label, input: string): Field {
  const f = findField(label, input);
  if (!f.selectionOptions)
    throw new ValidationError('field', `field "${f.properties?.displayName}" is not a selection field`, 'choices belong to selection fields');
  return f;
}

export function findChoice(field: Field, input: string): Choice {
  if (!field.selectionOptions) throw new ValidationError('field', `field "${field.properties?.displayName}" is not a selection field`);
  const list = field.selectionOptions.choices ?? [];
  const c = list.find((x) => x.id === input) ?? list.find((x) => x.properties?.displayName === input);
  if (!c) {
    const known = list.map((x) => `${x.properties?.displayName} (${x.id})`).join(', ') || 'none';
    throw new ValidationError('choice', `field "${field.properties?.displayName}" has no choice "${input}"`, `choices: ${known}`);
  }
  return c;
}

/** What the permission verbs are given: a label (or `labels/ID@REV`), `--revision`, `--admin`. */
export interface PermissionTarget {
  label: string;
  revision?: string;
  admin?: boolean;
}

/** The parent of a permission verb: the label, or one of its revisions (`--revision` or a name with `@REV`). */
export async function permissionParent(client: LabelsClient, opts: PermissionTarget): Promise<{ id: string; parent: string }> {
  if (opts.revision !== undefined) parentName('x', opts.revision);
  const ref = await resolveLabelRef(client, opts.label);
  return { id: ref.id, parent: parentName(ref.id, opts.revision ?? (ref.rev && ref.rev !== 'latest' ? ref.rev : undefined)) };
}

export const PERMISSION_COLUMNS = [
  { key: 'principal', get: (p: LabelPermission) => p.email ?? p.audience ?? p.group ?? p.person },
  { key: 'role' },
  { key: 'name' },
];

/** PRINCIPAL=ROLE grants, each principal once. */
export function uniqueGrants(inputs: string[]): Grant[] {
  const grants = inputs.map((g) => parseGrant(g));
  const seen = new Set<string>();
  for (const g of grants) {
    const key = principalKey(g);
    if (seen.has(key)) throw new ValidationError('grant', `${key} is given twice`, 'give each principal once');
    seen.add(key);
  }
  return grants;
}

import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import { LabelsClient } from '../../labels/client.js';
import { parseLabelRef, type LabelRef } from '../../labels/names.js';
import type { Choice, Field, Label } from '../../labels/types.js';

/** A client of the label service; `admin` sends useAdminAccess (the `--admin` flag). */
export async function labelsClient(ctx: Context, admin = false): Promise<LabelsClient> {
  const client = new LabelsClient(await ctx.http('labels'));
  client.admin = admin;
  return client;
}

/** A label reference for a write: the label itself (a revision suffix other than @latest is refused). */
export function writableRef(input: string): LabelRef {
  const ref = parseLabelRef(input);
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

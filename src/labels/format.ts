import type { Column } from '../core/output.js';
import { fieldType, type Field, type Label } from './types.js';

/** A label as one table row: id, title, state, revision and whether unpublished changes wait. */
export const LABEL_COLUMNS: Column[] = [
  { key: 'id' },
  { key: 'title', get: (l: Label) => l.properties?.title },
  { key: 'state', get: (l: Label) => l.lifecycle?.state },
  { key: 'revision', get: (l: Label) => l.revisionId },
  { key: 'unpublished', header: 'unpublished changes', get: (l: Label) => (l.lifecycle?.hasUnpublishedChanges ? 'yes' : 'no') },
  { key: 'fields', get: (l: Label) => l.fields?.length ?? '' },
  { key: 'type', get: (l: Label) => l.labelType },
];

export function describeField(f: Field): string {
  const type = fieldType(f) ?? '?';
  const state = f.lifecycle?.state && f.lifecycle.state !== 'PUBLISHED' ? ` [${f.lifecycle.state.toLowerCase()}]` : '';
  const choices = f.selectionOptions?.choices?.map((c) => `${c.properties?.displayName}${c.lifecycle?.state === 'DISABLED' ? ' (disabled)' : ''}`);
  return `${f.properties?.displayName} (${f.id}, ${type}${f.properties?.required ? ', required' : ''})${state}${choices ? `: ${choices.join(', ')}` : ''}`;
}

/** The fields of `labels get`, in order. */
export const LABEL_RECORD: Column[] = [
  { key: 'name' },
  { key: 'title', get: (l: Label) => l.properties?.title },
  { key: 'description', get: (l: Label) => l.properties?.description ?? '' },
  { key: 'type', get: (l: Label) => l.labelType },
  { key: 'state', get: (l: Label) => l.lifecycle?.state },
  { key: 'revision', get: (l: Label) => l.revisionId },
  { key: 'unpublished changes', get: (l: Label) => (l.lifecycle?.hasUnpublishedChanges ? 'yes (run: opsctl labels publish ' + l.id + ')' : 'no') },
  { key: 'copy mode', get: (l: Label) => l.appliedLabelPolicy?.copyMode ?? '' },
  { key: 'apps', get: (l: Label) => (l.enabledAppSettings?.enabledApps ?? []).map((a) => a.app).join(',') },
  { key: 'fields', get: (l: Label) => (l.fields ?? []).map(describeField).join('; ') },
];

/** One line after a change: where the label stands now. */
export function statusLine(l: Label): string {
  const waiting = l.lifecycle?.hasUnpublishedChanges;
  return `labels/${l.id}: ${l.lifecycle?.state ?? '?'}, revision ${l.revisionId}${waiting ? `; unpublished changes wait (publish: opsctl labels publish ${l.id})` : ''}`;
}

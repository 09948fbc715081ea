import { itemAt } from '../core/arrays.js';
import { UsageError } from '../core/errors.js';
import type { LabelsClient } from './client.js';
import { parseLabelRef, type LabelRef } from './names.js';

/** At most this many candidates are named in an error, then a count. */
const SHOWN = 10;
/** A revision suffix: `@latest`, `@published` or `@REVISION`. */
const REV_SUFFIX = /@([A-Za-z0-9]+)$/;

interface Known {
  id: string;
  title: string;
}

/**
 * A label as the user names it: `labels/ID` (taken as it is, no request), or a bare id or an exact title,
 * either with `@latest`, `@published` or `@REV`. A bare word is looked up in one list of the labels the
 * caller can see (with --admin, every label of the organisation): an id matches first, then an exact title,
 * then a title in any case. No match, or a title several labels share, is a usage error (exit 2) naming
 * the candidates, as the tracker does for names; nothing is sent after it.
 */
export async function resolveLabelRef(client: LabelsClient, input: string, field = 'label'): Promise<LabelRef> {
  const text = input.trim();
  if (!text) throw new UsageError(`${field}: give a label id, labels/ID or an exact title`, { field, hint: 'see: opsctl labels list' });
  if (text.startsWith('labels/')) return parseLabelRef(text, field);
  const known = (await client.list({ view: 'LABEL_VIEW_BASIC' })).map((l) => ({ id: l.id, title: l.properties?.title ?? '' }));
  const rev = REV_SUFFIX.exec(text)?.[1];
  const base = rev ? text.slice(0, -rev.length - 1) : text;
  const withRev = (id: string, r?: string): LabelRef => ({ id, ...(r ? { rev: r } : {}) });
  // an id: the whole word, or the word before its @revision
  if (known.some((k) => k.id === text)) return withRev(text);
  if (rev && known.some((k) => k.id === base)) return withRev(base, rev);
  // a title: the whole text (a title may hold an @), then the text before an @revision; exact, then in any case
  for (const [title, r] of rev
    ? ([
        [text, undefined],
        [base, rev],
      ] as const)
    : ([[text, undefined]] as const)) {
    const exact = known.filter((k) => k.title === title);
    const found = exact.length ? exact : known.filter((k) => k.title.toLowerCase() === title.toLowerCase());
    if (found.length === 1) return withRev(itemAt(found, 0).id, r);
    if (found.length > 1) {
      throw new UsageError(`${field}: "${title}" is the title of ${found.length} labels`, {
        code: 'ambiguous_name',
        field,
        hint: `give the id of the one you mean: ${candidates(found)}`,
      });
    }
  }
  throw new UsageError(`${field}: no label has the id or title "${text}"`, {
    code: 'unknown_name',
    field,
    hint: known.length
      ? `choose one of: ${candidates(known)} (titles match exactly, then in any case; labels/ID is taken without a lookup)${client.admin ? '' : '; an ADMIN label may need --admin'}`
      : `you can see no labels yet (see: opsctl labels list${client.admin ? '' : '; an ADMIN label needs --admin'})`,
  });
}

function candidates(found: readonly Known[]): string {
  const shown = found.slice(0, SHOWN).map((k) => `"${k.title}" (${k.id})`);
  return found.length > SHOWN ? `${shown.join(', ')} … and ${found.length - SHOWN} more (${found.length} in all)` : shown.join(', ');
}

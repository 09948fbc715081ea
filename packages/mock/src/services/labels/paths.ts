/**
 * The label API's resource paths (`/v2/labels/{id}[@rev][:verb]` and the same under `/v2beta`, `.../permissions[:batchX]`,
 * `.../revisions/{rev}/permissions/{pid}`, …). find-my-way treats `:` as a parameter marker, so every
 * `/v2/labels/*` (and `/v2beta/labels/*`) request is routed here and the suffix is parsed in this one function.
 */

import { LABEL_VERBS, type LabelVerb } from '@opsctl/shared/labels/schema.js';
import { itemAt } from '../../arrays.js';

export { LABEL_VERBS, type LabelVerb };

export type LabelPath =
  /** `labels/ID` or `labels/ID@REV|latest|published` */
  | { kind: 'label'; id: string; rev?: string }
  | { kind: 'verb'; id: string; verb: LabelVerb }
  /** `labels/ID[/revisions/REV]/permissions[:batchUpdate|:batchDelete]` */
  | { kind: 'permissions'; id: string; rev?: string; batch?: 'batchUpdate' | 'batchDelete' }
  | { kind: 'permission'; id: string; rev?: string; permissionId: string }
  | { kind: 'locks'; id: string; rev?: string };

const ID = '([A-Za-z0-9_-]+)';
const REV = '([A-Za-z0-9]+)';

/** Parses what follows `/v2/labels/` (or `/v2beta/labels/`); undefined when it is no label-API path. */
export function parseLabelPath(suffix: string): LabelPath | undefined {
  let s: string;
  try {
    s = decodeURIComponent(suffix);
  } catch {
    return undefined;
  }
  let m = new RegExp(`^${ID}(?:@${REV})?$`).exec(s);
  if (m) return { kind: 'label', id: itemAt(m, 1), ...(m[2] ? { rev: m[2] } : {}) };
  m = new RegExp(`^${ID}(?:@latest)?:([A-Za-z]+)$`).exec(s);
  if (m) {
    const verb = itemAt(m, 2);
    return (LABEL_VERBS as readonly string[]).includes(verb) ? { kind: 'verb', id: itemAt(m, 1), verb: verb as LabelVerb } : undefined;
  }
  m = new RegExp(`^${ID}(?:/revisions/${REV})?/permissions(?::(batchUpdate|batchDelete))?$`).exec(s);
  if (m) return { kind: 'permissions', id: itemAt(m, 1), ...(m[2] ? { rev: m[2] } : {}), ...(m[3] ? { batch: m[3] as 'batchUpdate' | 'batchDelete' } : {}) };
  m = new RegExp(`^${ID}(?:/revisions/${REV})?/permissions/([A-Za-z0-9_.@-]+)$`).exec(s);
  if (m) return { kind: 'permission', id: itemAt(m, 1), ...(m[2] ? { rev: m[2] } : {}), permissionId: itemAt(m, 3) };
  m = new RegExp(`^${ID}(?:/revisions/${REV})?/locks$`).exec(s);
  if (m) return { kind: 'locks', id: itemAt(m, 1), ...(m[2] ? { rev: m[2] } : {}) };
  return undefined;
}

/** Which HTTP method each path kind accepts. */
export function allowedMethods(p: LabelPath): string[] {
  switch (p.kind) {
    case 'label':
      return ['GET', 'DELETE'];
    case 'verb':
      return ['POST'];
    case 'permissions':
      return p.batch ? ['POST'] : ['GET', 'POST', 'PATCH'];
    case 'permission':
      return ['DELETE'];
    case 'locks':
      return ['GET'];
  }
}

import { ValidationError } from '../core/errors.js';
import { ROLES, type Role } from './schema.js';

export { ROLES, type Role };

/** A label reference: a bare id, `labels/ID`, or either with `@latest`, `@published` or `@REVISION`; also a revision name `labels/ID/revisions/REV`. */
export interface LabelRef {
  id: string;
  rev?: string;
}

const REF = /^(?:labels\/)?([A-Za-z0-9_-]+)(?:@([A-Za-z0-9]+)|\/revisions\/([A-Za-z0-9]+))?$/;

export function parseLabelRef(input: string, field = 'label'): LabelRef {
  const [, id, atRev, pathRev] = REF.exec(input.trim()) ?? [];
  if (!id) {
    throw new ValidationError(
      field,
      `"${input}" is not a label id or name`,
      'give the id (e.g. 0a1b2c) or the name labels/ID, optionally with @latest, @published or @REVISION',
    );
  }
  const rev = atRev ?? pathRev;
  return { id, ...(rev ? { rev } : {}) };
}

/** `labels/ID` or `labels/ID@REV`. */
export function labelName(ref: LabelRef): string {
  return `labels/${ref.id}${ref.rev ? `@${ref.rev}` : ''}`;
}

/** The parent of permissions and locks: the label, or one of its revisions. */
export function parentName(id: string, revision?: string): string {
  if (revision !== undefined && !/^[A-Za-z0-9]+$/.test(revision)) {
    throw new ValidationError('--revision', `"${revision}" is not a revision id`, 'use a revision number such as 3 (see: opsctl labels get ID)');
  }
  return revision ? `labels/${id}/revisions/${revision}` : `labels/${id}`;
}

/** A grant written `PRINCIPAL=ROLE`: an email or `audiences/…`, and a role (any case). */
export interface Grant {
  email?: string;
  audience?: string;
  role: Role;
}

export function parseGrant(input: string, field = 'grant'): Grant {
  const at = input.lastIndexOf('=');
  if (at <= 0)
    throw new ValidationError(
      field,
      `"${input}" must be PRINCIPAL=ROLE`,
      `e.g. bob@example.com=READER or audiences/default=APPLIER; roles: ${ROLES.join(', ')}`,
    );
  const role = input
    .slice(at + 1)
    .trim()
    .toUpperCase();
  if (!(ROLES as readonly string[]).includes(role)) throw new ValidationError(field, `role "${input.slice(at + 1)}" is not one of ${ROLES.join(', ')}`);
  return { ...parsePrincipal(input.slice(0, at).trim(), field), role: role as Role };
}

export function parsePrincipal(input: string, field = 'principal'): { email?: string; audience?: string } {
  if (/^audiences\/[A-Za-z0-9_-]+$/.test(input)) return { audience: input };
  if (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(input)) return { email: input.toLowerCase() };
  throw new ValidationError(field, `"${input}" is neither an email address nor an audience`, 'use user@example.com, group@example.com or audiences/default');
}

export function principalKey(p: { email?: string; audience?: string }): string {
  return p.email ? p.email.toLowerCase() : (p.audience ?? '');
}

import { CONFIRM_HELP } from '../../action.js';

/** The pieces the label verbs' specs share (light: the specs are loaded for --help). */
export const LABEL_ARG = '<label>';
export const ADMIN_HELP = 'use admin access (useAdminAccess; needs the drive.admin.labels scope): the way to read or change an ADMIN label';
/** `--admin` on a verb that acts on one label. */
export const admin = { type: 'boolean', help: ADMIN_HELP } as const;
/** `--dry-run` on a destructive verb. */
export const dryRun = { type: 'boolean', help: 'show what would be deleted and change nothing' } as const;
/** `--revision` on the permission verbs. */
export const revision = { type: 'string', value: 'rev', help: 'act on this revision of the label' } as const;
/** The policy flags of a disabled field or choice. */
export const hideInSearch = { type: 'boolean', help: 'hide it in search' } as const;
export const showInApply = { type: 'boolean', help: 'keep showing it in the apply menu' } as const;
/** `ALWAYS_COPY` → `always-copy`, as the CLI spells enum values. */
export const kebab = (v: string) => v.toLowerCase().replace(/_/g, '-');
export { CONFIRM_HELP };

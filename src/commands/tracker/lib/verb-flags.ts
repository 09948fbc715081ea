/** Flags several generated tracker verbs share (as spec fragments). */

export const PAGING_FLAGS = {
  all: { type: 'boolean', help: 'fetch every page' },
  limit: { type: 'string', value: 'n', help: 'stop after n records (says so when more exist)' },
} as const;

/** Create, update and apply: what the contract advises against (a project abbreviation over 3 characters) refused, not only warned about. */
export const STRICT_FLAG = {
  strict: { type: 'boolean', help: 'refuse a value the contract advises against (e.g. a project abbreviation over 3 characters) instead of warning' },
} as const;

export const DATA_FLAG = {
  data: { type: 'string', value: 'json|@file|-', help: 'the request body as JSON (flags override its fields)' },
} as const;

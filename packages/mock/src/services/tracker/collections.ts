// Its own module, with no imports: the state file's schema (state-schema.ts) checks these
// without loading the tracker mock.

/** Collections of the tracker slice, each an array of records. */
export const COLLECTIONS = [
  'labels',
  'categories',
  'customFields',
  'documents',
  'entityTemplates',
  'epics',
  'epicComments',
  'health',
  'files',
  'linkedFiles',
  'groups',
  'webhooks',
  'iterations',
  'keyResults',
  'members',
  'objectives',
  'projects',
  'repositories',
  'stories',
  'storyComments',
  'tasks',
  'storyLinks',
  'storyHistory',
] as const;

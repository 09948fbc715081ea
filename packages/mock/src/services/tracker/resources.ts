/**
 * The tracker resources the mock serves, as routes: the name a 404 uses, the path under /api/v3, the id
 * type and the verbs of the generic CRUD routes (crud.ts). The CLI describes the same resources in
 * src/tracker/resources.ts for its own verbs; test/unit/mock-package.test.ts keeps the two in step.
 */
export interface ResourceRoutes {
  singular: string;
  path: string;
  idType: 'int' | 'uuid';
  verbs: readonly ('list' | 'get' | 'create' | 'update' | 'delete')[];
}

export const categories: ResourceRoutes = { singular: 'category', path: '/categories', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const customFields: ResourceRoutes = { singular: 'custom field', path: '/custom-fields', idType: 'uuid', verbs: ['list', 'get', 'update', 'delete'] };
export const documents: ResourceRoutes = { singular: 'document', path: '/documents', idType: 'uuid', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const entityTemplates: ResourceRoutes = {
  singular: 'entity template',
  path: '/entity-templates',
  idType: 'uuid',
  verbs: ['list', 'get', 'create', 'update', 'delete'],
};
export const epics: ResourceRoutes = { singular: 'epic', path: '/epics', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const files: ResourceRoutes = { singular: 'file', path: '/files', idType: 'int', verbs: ['list', 'get', 'update', 'delete'] };
export const linkedFiles: ResourceRoutes = {
  singular: 'linked file',
  path: '/linked-files',
  idType: 'int',
  verbs: ['list', 'get', 'create', 'update', 'delete'],
};
export const groups: ResourceRoutes = { singular: 'group', path: '/groups', idType: 'uuid', verbs: ['list', 'get', 'create', 'update'] };
export const health: ResourceRoutes = { singular: 'health record', path: '/health', idType: 'uuid', verbs: ['update'] };
export const webhooks: ResourceRoutes = { singular: 'webhook integration', path: '/integrations/webhook', idType: 'int', verbs: ['get', 'create', 'delete'] };
export const iterations: ResourceRoutes = { singular: 'iteration', path: '/iterations', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const keyResults: ResourceRoutes = { singular: 'key result', path: '/key-results', idType: 'uuid', verbs: ['get', 'update'] };
export const labels: ResourceRoutes = { singular: 'label', path: '/labels', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const members: ResourceRoutes = { singular: 'member', path: '/members', idType: 'uuid', verbs: ['list', 'get'] };
export const objectives: ResourceRoutes = { singular: 'objective', path: '/objectives', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const milestones: ResourceRoutes = { singular: 'milestone', path: '/milestones', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const projects: ResourceRoutes = { singular: 'project', path: '/projects', idType: 'int', verbs: ['list', 'get', 'create', 'update', 'delete'] };
export const repositories: ResourceRoutes = { singular: 'repository', path: '/repositories', idType: 'int', verbs: ['list', 'get'] };
export const stories: ResourceRoutes = { singular: 'story', path: '/stories', idType: 'int', verbs: ['get', 'create', 'update', 'delete'] };
export const storyLinks: ResourceRoutes = { singular: 'story link', path: '/story-links', idType: 'int', verbs: ['get', 'create', 'update', 'delete'] };
export const workflows: ResourceRoutes = { singular: 'workflow', path: '/workflows', idType: 'int', verbs: ['list', 'get'] };

/** Every resource above, by the name the CLI table gives it (for the test that keeps them in step). */
export const RESOURCE_ROUTES: Readonly<Record<string, ResourceRoutes>> = {
  categories,
  customFields,
  documents,
  entityTemplates,
  epics,
  files,
  linkedFiles,
  groups,
  health,
  webhooks,
  iterations,
  keyResults,
  labels,
  members,
  objectives,
  milestones,
  projects,
  repositories,
  stories,
  storyLinks,
  workflows,
};

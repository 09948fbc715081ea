import { itemIdKind } from '@opsctl/shared/tracker/item-id.js';

/**
 * The tracker resources the mock serves, as routes: the name a 404 uses, the path under /api/v3, the id
 * type (the contract's kind of `{path}/{id}`) and the verbs of the generic CRUD routes (crud.ts). The CLI
 * describes the same resources in src/tracker/resources.ts for its own verbs; test/unit/mock-package.test.ts
 * keeps the two in step.
 */
export interface ResourceRoutes {
  singular: string;
  path: string;
  idType: 'int' | 'uuid';
  verbs: readonly Verb[];
}
type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';

function routes(singular: string, path: string, verbs: readonly Verb[]): ResourceRoutes {
  const kind = itemIdKind(path);
  if (kind !== 'int' && kind !== 'uuid') throw new Error(`mock tracker routes: the contract has no integer or uuid id under ${path}/{id}`);
  return { singular, path, idType: kind, verbs };
}

export const categories = routes('category', '/categories', ['list', 'get', 'create', 'update', 'delete']);
export const customFields = routes('custom field', '/custom-fields', ['list', 'get', 'update', 'delete']);
export const documents = routes('document', '/documents', ['list', 'get', 'create', 'update', 'delete']);
export const entityTemplates = routes('entity template', '/entity-templates', ['list', 'get', 'create', 'update', 'delete']);
export const epics = routes('epic', '/epics', ['list', 'get', 'create', 'update', 'delete']);
export const files = routes('file', '/files', ['list', 'get', 'update', 'delete']);
export const linkedFiles = routes('linked file', '/linked-files', ['list', 'get', 'create', 'update', 'delete']);
export const groups = routes('group', '/groups', ['list', 'get', 'create', 'update']);
export const health = routes('health record', '/health', ['update']);
export const webhooks = routes('webhook integration', '/integrations/webhook', ['get', 'create', 'delete']);
export const iterations = routes('iteration', '/iterations', ['list', 'get', 'create', 'update', 'delete']);
export const keyResults = routes('key result', '/key-results', ['get', 'update']);
export const labels = routes('label', '/labels', ['list', 'get', 'create', 'update', 'delete']);
export const members = routes('member', '/members', ['list', 'get']);
export const objectives = routes('objective', '/objectives', ['list', 'get', 'create', 'update', 'delete']);
export const milestones = routes('milestone', '/milestones', ['list', 'get', 'create', 'update', 'delete']);
export const projects = routes('project', '/projects', ['list', 'get', 'create', 'update', 'delete']);
export const repositories = routes('repository', '/repositories', ['list', 'get']);
export const stories = routes('story', '/stories', ['get', 'create', 'update', 'delete']);
export const storyLinks = routes('story link', '/story-links', ['get', 'create', 'update', 'delete']);
export const workflows = routes('workflow', '/workflows', ['list', 'get']);

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

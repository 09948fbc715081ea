import { UsageError } from '../core/errors.js';
import { itemAt } from '../core/arrays.js';
import type { HttpClient } from '../core/http.js';
import { ID_KINDS } from '@opsctl/shared/tracker/flags.js';
import type { RefKind } from '@opsctl/shared/tracker/resource-spec.js';
import { UUID_PATTERN } from './fields.js';

/**
 * Names instead of ids: what a flag or argument that takes an id of some kind may also be called by.
 * Exact matches only (any case): a name that fits no record or several is refused (exit 2) with the
 * candidates, never guessed by prefix. A number (int ids) or a uuid (uuid ids) is still taken as an id.
 */
export type { RefKind } from '@opsctl/shared/tracker/resource-spec.js';

interface Named {
  id: number | string;
  /** Every name it answers to (compared case-insensitively). */
  names: string[];
  /** How it is shown among candidates. */
  label: string;
}

interface KindSpec {
  /** singular, for messages */
  what: string;
  plural: string;
  /** What its ids are: the contract's type of the record's `id` (generated ID_KINDS). */
  idType: 'int' | 'uuid';
  /** The one list request (path under /api/v3) and how its answer becomes named records. */
  path: string;
  read: (answer: unknown) => Named[];
  /** Where a person sees them. */
  see: string;
}

/** What a record definition's `id` is, in the contract; a name the contract lacks is our own bug (a test loads every kind). */
function idKindOf(definition: string): 'int' | 'uuid' {
  const kind = ID_KINDS[definition];
  if (!kind) throw new Error(`names.ts: the tracker contract has no ${definition} with an integer or uuid id`);
  return kind;
}

type Row = Readonly<Record<string, unknown>>;
/** The records of a list answer: its objects (an answer that is no list has none). */
const rowsOf = (answer: unknown): Row[] => (Array.isArray(answer) ? answer.filter((r): r is Row => r !== null && typeof r === 'object') : []);
/** A name field as text ('' when absent). */
const textOf = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? '');
/** A record's id as the API gives it (an int or a UUID). */
const idOf = (v: unknown): number | string => (typeof v === 'number' ? v : String(v));

const byName =
  (what: string) =>
  (answer: unknown): Named[] =>
    rowsOf(answer).map((r) => ({ id: idOf(r.id), names: [textOf(r.name)], label: `"${String(r.name)}" (${what} ${String(r.id)})` }));

const stateRows = (workflows: unknown): Named[] =>
  rowsOf(workflows).flatMap((w) =>
    rowsOf(w.states).map((s) => ({ id: idOf(s.id), names: [textOf(s.name)], label: `"${String(s.name)}" (${String(w.name)}, ${String(s.id)})` })),
  );
/** A member's or group's nested object (its profile). */
const objectOf = (v: unknown): Row => (v !== null && typeof v === 'object' ? (v as Row) : {});

export const REF_KINDS: Readonly<Record<RefKind, KindSpec>> = {
  member: {
    what: 'member',
    plural: 'members',
    idType: idKindOf('Member'),
    path: '/members',
    read: (answer) =>
      rowsOf(answer).map((m) => {
        const profile = objectOf(m.profile);
        const mention = textOf(profile.mention_name);
        const email = textOf(profile.email_address);
        return { id: idOf(m.id), names: [mention, `@${mention}`, ...(email ? [email] : [])], label: `@${mention}${email ? ` <${email}>` : ''}` };
      }),
    see: 'opsctl tracker members list',
  },
  epic: { what: 'epic', plural: 'epics', idType: idKindOf('Epic'), path: '/epics', read: byName('epic'), see: 'opsctl tracker epics list' },
  project: {
    what: 'project',
    plural: 'projects',
    idType: idKindOf('Project'),
    path: '/projects',
    read: byName('project'),
    see: 'opsctl tracker projects list',
  },
  iteration: {
    what: 'iteration',
    plural: 'iterations',
    idType: idKindOf('Iteration'),
    path: '/iterations',
    read: byName('iteration'),
    see: 'opsctl tracker iterations list',
  },
  label: { what: 'label', plural: 'labels', idType: idKindOf('Label'), path: '/labels', read: byName('label'), see: 'opsctl tracker labels list' },
  group: {
    what: 'group',
    plural: 'groups',
    idType: idKindOf('Group'),
    path: '/groups',
    read: (answer) =>
      rowsOf(answer).map((g) => ({
        id: idOf(g.id),
        names: [textOf(g.name), textOf(g.mention_name), `@${textOf(g.mention_name)}`],
        label: `"${String(g.name)}" (@${String(g.mention_name)})`,
      })),
    see: 'opsctl tracker groups list',
  },
  objective: {
    what: 'objective',
    plural: 'objectives',
    idType: idKindOf('Objective'),
    path: '/objectives',
    read: byName('objective'),
    see: 'opsctl tracker objectives list',
  },
  milestone: {
    what: 'milestone',
    plural: 'milestones',
    idType: idKindOf('Milestone'),
    path: '/milestones',
    read: byName('milestone'),
    see: 'opsctl tracker milestones list',
  },
  category: {
    what: 'category',
    plural: 'categories',
    idType: idKindOf('Category'),
    path: '/categories',
    read: byName('category'),
    see: 'opsctl tracker categories list',
  },
  workflow: {
    what: 'workflow',
    plural: 'workflows',
    idType: idKindOf('Workflow'),
    path: '/workflows',
    read: byName('workflow'),
    see: 'opsctl tracker workflows list',
  },
  'workflow-state': {
    what: 'workflow state',
    plural: 'workflow states',
    idType: idKindOf('WorkflowState'),
    path: '/workflows',
    read: stateRows,
    see: 'opsctl tracker workflows states ID',
  },
  'epic-state': {
    what: 'epic state',
    plural: 'epic states',
    idType: idKindOf('EpicState'),
    path: '/epic-workflow',
    read: (wf) => stateRows([{ name: 'epic workflow', states: objectOf(wf).epic_states ?? [] }]),
    see: 'opsctl tracker epic-workflow get',
  },
};

/** The placeholder a flag or argument of a kind shows in help and completions. */
export function refPlaceholder(kind: RefKind, { list }: { list: boolean }): string {
  if (kind === 'member') return list ? 'members' : 'member';
  return list ? 'names|ids' : 'name|id';
}

/** The words a help line adds to say that a flag takes names. */
export function refHelp(kind: RefKind): string {
  if (kind === 'member') return 'mention name, email, @me or id';
  return `${REF_KINDS[kind].what} name or id`;
}

/** Whether `raw` is already an id of the kind (so no lookup is made). */
export function isId(kind: RefKind, raw: string): boolean {
  return REF_KINDS[kind].idType === 'int' ? /^\d{1,15}$/.test(raw) : UUID_PATTERN.test(raw);
}

/** At most this many candidates are listed in an error, then a count. */
const SHOWN = 10;

/**
 * Resolves names for one command run. Each kind's list is fetched at most once (the first time a name
 * of that kind is asked for, through the client's pacing) and shared by every flag and argument after.
 */
export class NameResolver {
  private readonly lists = new Map<string, Promise<unknown>>();
  private me?: Promise<string>;

  constructor(
    private readonly http: Pick<HttpClient, 'get'>,
    private readonly prefix = '/api/v3',
  ) {}

  /** The id that `raw` means for `kind`; `where` names the flag or argument for messages. */
  async resolve(kind: RefKind, raw: string, where: string): Promise<number | string> {
    const spec = REF_KINDS[kind];
    const text = raw.trim();
    if (isId(kind, text)) return spec.idType === 'int' ? Number(text) : text;
    if (!text) throw new UsageError(`${where}: give a ${spec.what} name or id`, { field: where, hint: `see: ${spec.see}` });
    if (kind === 'member' && text.toLowerCase() === '@me') return this.whoAmI();
    const records = spec.read(await this.fetch(spec.path));
    const key = text.toLowerCase();
    const found = records.filter((r) => r.names.some((n) => n.toLowerCase() === key));
    if (found.length === 1) return itemAt(found, 0).id;
    if (found.length === 0) {
      throw new UsageError(`${where}: no ${spec.what} is named "${text}"`, {
        code: 'unknown_name',
        field: where,
        hint: records.length
          ? `choose one of: ${candidates(records)} (names match exactly, in any case; an id works too)`
          : `there are no ${spec.plural} yet (see: ${spec.see})`,
      });
    }
    throw new UsageError(`${where}: "${text}" names ${found.length} ${spec.plural}`, {
      code: 'ambiguous_name',
      field: where,
      hint: `give the id of the one you mean: ${candidates(found)}`,
    });
  }

  /** Every item of a comma-separated list (or an array), each a name or an id. */
  async resolveAll(kind: RefKind, raw: readonly string[], where: string): Promise<Array<number | string>> {
    const out: Array<number | string> = [];
    for (const item of raw) out.push(await this.resolve(kind, item, where));
    return out;
  }

  private fetch(path: string): Promise<unknown> {
    let got = this.lists.get(path);
    if (!got) {
      got = this.http.get<unknown>(`${this.prefix}${path}`);
      this.lists.set(path, got);
    }
    return got;
  }

  private whoAmI(): Promise<string> {
    this.me ??= this.http.get<{ id: string }>(`${this.prefix}/member`).then((m) => String(m.id));
    return this.me;
  }
}

function candidates(records: readonly Named[]): string {
  const shown = records.slice(0, SHOWN).map((r) => r.label);
  return records.length > SHOWN ? `${shown.join(', ')} … and ${records.length - SHOWN} more (${records.length} in all)` : shown.join(', ');
}

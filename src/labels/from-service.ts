import { FIELD_TYPE_OPTIONS, FIELD_TYPES, SERVER_OWNED, type FieldType } from './schema.js';
import type { LabelPermission } from './types.js';

/**
 * The service's Label resource (what `labels get --json` and `labels list --json` print) turned into the
 * apply-file format (src/labels/file.ts). `labels export` prints this; `labels apply` uses it to accept
 * the service's own output. Disabled fields and choices are left out (apply leaves them disabled).
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys of a Label that apply does not manage (not output-only, but not part of the file either). */
const UNMANAGED = ['learnMoreUri'];
const LABEL_KEYS = new Set(['properties', 'labelType', 'enabledAppSettings', 'fields', ...SERVER_OWNED.label, ...UNMANAGED]);
const FIELD_KEYS = new Set(['properties', ...Object.values(FIELD_TYPE_OPTIONS), ...SERVER_OWNED.field]);
const CHOICE_KEYS = new Set(['id', 'properties', ...SERVER_OWNED.choice]);

/** `v` when it is a list, else an empty one. */
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);

/** Does this look like the service's Label (rather than a file's label)? */
export function isServiceLabel(v: unknown): v is Obj {
  return isObj(v) && (isObj(v.properties) || (typeof v.name === 'string' && v.name.startsWith('labels/')) || v.revisionId !== undefined);
}

const disabledState = (x: unknown) => isObj(x) && isObj(x.lifecycle) && x.lifecycle.state === 'DISABLED';

export interface ToFileOptions {
  /** Keep the ids of fields and choices (apply of `get --json`); an export leaves them out, so a copy elsewhere matches by name. */
  ids: boolean;
  /** The label's permissions, for an export (a Label resource does not carry them). */
  permissions?: LabelPermission[];
  /** Collects what was left out because the service owns it (`name`, `fields[].queryKey`…). */
  ignored?: Set<string>;
}

/** Keys a Label, Field or Choice does not have (a newer service's, or a typo) are ignored and named like the server-owned ones. */
function unknownKeys(o: Obj, known: Set<string>, prefix: string, ignored: Set<string> | undefined): void {
  for (const k of Object.keys(o)) if (!known.has(k)) ignored?.add(`${prefix}${k}`);
}

function note(o: Obj, owned: readonly string[], prefix: string, ignored: Set<string> | undefined): void {
  for (const k of owned) if (o[k] !== undefined && ignored) ignored.add(`${prefix}${k}`);
}

function choiceToFile(c: Obj, opts: ToFileOptions): unknown {
  note(c, SERVER_OWNED.choice, 'fields[].choices[].', opts.ignored);
  const p = isObj(c.properties) ? c.properties : {};
  const out: Obj = {};
  if (opts.ids && c.id !== undefined) out.id = c.id;
  out.name = p.displayName;
  if (p.description !== undefined && p.description !== '') out.description = p.description;
  unknownKeys(c, CHOICE_KEYS, 'fields[].choices[].', opts.ignored);
  return Object.keys(out).length === 1 && typeof out.name === 'string' ? out.name : out;
}

function fieldToFile(f: Obj, opts: ToFileOptions): Obj {
  note(
    f,
    SERVER_OWNED.field.filter((k) => k !== 'id'),
    'fields[].',
    opts.ignored,
  );
  const p = isObj(f.properties) ? f.properties : {};
  const type = FIELD_TYPES.find((t: FieldType) => f[FIELD_TYPE_OPTIONS[t]] !== undefined);
  const options = type ? f[FIELD_TYPE_OPTIONS[type]] : undefined;
  const o = isObj(options) ? options : {};
  const out: Obj = {};
  if (opts.ids && f.id !== undefined) out.id = f.id;
  out.name = p.displayName;
  if (type) out.type = type;
  if (p.required === true) out.required = true;
  if ((type === 'selection' || type === 'user') && isObj(o.listOptions))
    out.list = typeof o.listOptions.maxEntries === 'number' ? o.listOptions.maxEntries : true;
  if (type === 'date') out.dateFormat = o.dateFormatType ?? 'LONG_DATE';
  if (type === 'selection')
    out.choices = asList(o.choices)
      .filter((c) => !disabledState(c))
      .map((c) => (isObj(c) ? choiceToFile(c, opts) : c));
  unknownKeys(f, FIELD_KEYS, 'fields[].', opts.ignored);
  return out;
}

/** One Label resource in the apply-file format, keys in the file's order. */
export function labelToFile(l: Obj, opts: ToFileOptions): Obj {
  note(
    l,
    SERVER_OWNED.label.filter((k) => !['id', 'appliedLabelPolicy', 'lifecycle'].includes(k)),
    '',
    opts.ignored,
  );
  note(l, UNMANAGED, '', opts.ignored);
  const p = isObj(l.properties) ? l.properties : {};
  const out: Obj = {};
  if (opts.ids && l.id !== undefined) out.id = l.id;
  out.title = p.title;
  if (p.description !== undefined && p.description !== '') out.description = p.description;
  if (l.labelType !== undefined) out.labelType = l.labelType;
  const full = isObj(l.lifecycle);
  const copyMode = isObj(l.appliedLabelPolicy) ? l.appliedLabelPolicy.copyMode : undefined;
  if (copyMode !== undefined && copyMode !== 'COPY_MODE_UNSPECIFIED') out.copyMode = copyMode;
  const apps = isObj(l.enabledAppSettings) ? l.enabledAppSettings.enabledApps : undefined;
  if (Array.isArray(apps)) out.enabledApps = asList(apps).map((a) => (isObj(a) ? a.app : a));
  else if (full) out.enabledApps = [];
  if (full) {
    const lc = l.lifecycle as Obj;
    const policy = isObj(lc.disabledPolicy) ? lc.disabledPolicy : {};
    out.disabled =
      lc.state !== 'DISABLED'
        ? false
        : policy.hideInSearch || policy.showInApply
          ? { hideInSearch: Boolean(policy.hideInSearch), showInApply: Boolean(policy.showInApply) }
          : true;
  }
  out.fields = asList(l.fields)
    .filter((f) => !disabledState(f))
    .map((f) => (isObj(f) ? fieldToFile(f, opts) : f));
  if (opts.permissions) {
    out.permissions = opts.permissions
      .filter((x) => x.email || x.audience)
      .map((x) => (x.email ? { email: x.email, role: x.role } : { audience: x.audience, role: x.role }));
  }
  unknownKeys(l, LABEL_KEYS, '', opts.ignored);
  return out;
}

/**
 * A parsed apply file with the service's own output turned into the file format: a Label, a list of
 * them, or a `{labels: [...], nextPageToken}` page. Anything else is returned as it is.
 */
export function fromServiceShape(raw: unknown): { value: unknown; ignored: string[]; idFromService: boolean[] } {
  const page: unknown[] | undefined =
    isObj(raw) && Array.isArray(raw.labels) && Object.keys(raw).every((k) => k === 'labels' || k === 'nextPageToken') ? raw.labels : undefined;
  const items: unknown[] = page ?? (Array.isArray(raw) ? raw : [raw]);
  const ignored = new Set<string>();
  const idFromService = items.map((x) => isServiceLabel(x));
  if (!idFromService.some(Boolean)) return { value: raw, ignored: [], idFromService };
  const value = items.map((x, i) => (idFromService[i] ? labelToFile(x as Obj, { ids: true, ignored }) : x));
  return { value: page || Array.isArray(raw) ? value : value[0], ignored: [...ignored], idFromService };
}

import type { Context } from '../../../context.js';
import { ValidationError } from '../../../core/errors.js';
import type { HttpClient } from '../../../core/http.js';
import type { Column } from '../../../core/output.js';
import { checkClientFields, type ClientType } from '@opsctl/mock/console';

/** The mock's developer-console API, on the auth endpoint (OPSCTL_AUTH_URL, the profile, or the embedded mock). */
export const ADMIN = '/oauth2/mock';

export function consoleApi(ctx: Context): Promise<HttpClient> {
  return ctx.http('auth');
}

export const clientPath = (id: string) => `${ADMIN}/clients/${encodeURIComponent(id)}`;

/** Each client field's flag. */
export const FIELD_FLAGS = new Map<string, string>([
  ['client_id', '--client-id'],
  ['name', '--name'],
  ['type', '--type'],
  ['package_name', '--package-name'],
  ['sha1_fingerprint', '--sha1-fingerprint'],
  ['custom_scheme_enabled', '--custom-scheme'],
  ['bundle_id', '--bundle-id'],
  ['store_id', '--store-id'],
  ['team_id', '--team-id'],
  ['integrity', '--integrity'],
  ['item_id', '--item-id'],
]);

export interface FieldFlags {
  name?: string;
  packageName?: string;
  sha1Fingerprint?: string;
  bundleId?: string;
  storeId?: string;
  teamId?: string;
  itemId?: string;
}

/** The fields the flags set (only those given). */
export function fieldsFromFlags(o: FieldFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => {
    if (v !== undefined) body[k] = v;
  };
  set('name', o.name);
  set('package_name', o.packageName);
  set('sha1_fingerprint', o.sha1Fingerprint);
  set('bundle_id', o.bundleId);
  set('store_id', o.storeId);
  set('team_id', o.teamId);
  set('item_id', o.itemId);
  return body;
}

/** The same check the mock makes, before anything is sent: exit 2 naming the flag. */
export function validateFields(body: Record<string, unknown>, mode: 'create' | 'update', type?: ClientType): Record<string, unknown> {
  const checked = checkClientFields(body, mode, type);
  if (!checked.ok) {
    const flag = FIELD_FLAGS.get(checked.field) ?? checked.field;
    throw new ValidationError(flag, checked.message, checked.hint ?? (checked.field === 'body' ? 'give at least one field flag, e.g. --name' : undefined));
  }
  return checked.value;
}

export function onOff(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new ValidationError(flag, `"${value}" is not on or off`);
}

/** A client as the console API lists it: the fields its table reads. */
export interface ClientRow {
  type?: string;
  status?: string;
  deleted_by?: string;
  restorable_until?: string;
  package_name?: string;
  custom_scheme_enabled?: boolean;
  ownership?: { state?: string };
  bundle_id?: string;
  integrity?: { effective?: string; pending?: { to?: string } };
  store_id?: string;
  item_id?: string;
}

export const CLIENT_COLUMNS: Column<ClientRow>[] = [
  { key: 'client_id', header: 'client id' },
  { key: 'type' },
  { key: 'name' },
  { key: 'status' },
  { key: 'detail', get: (c) => clientDetail(c) },
];

/** The one type-specific fact worth a column. */
function clientDetail(c: ClientRow): string {
  if (c.status !== 'active')
    return `deleted ${c.deleted_by ?? ''} ${c.status === 'deleted' ? `(restorable until ${c.restorable_until})` : '(beyond restore)'}`.replace(/\s+/g, ' ');
  if (c.type === 'mobile_a') return `${c.package_name} custom-scheme:${c.custom_scheme_enabled ? 'on' : 'off'} ownership:${c.ownership?.state}`;
  if (c.type === 'mobile_b') return `${c.bundle_id} integrity:${c.integrity?.effective}${c.integrity?.pending ? `→${c.integrity.pending.to}` : ''}`;
  if (c.type === 'universal_desktop') return `store ${c.store_id}`;
  if (c.type === 'extension') return `item ${c.item_id} ownership:${c.ownership?.state}`;
  return '';
}

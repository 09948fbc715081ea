import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DELTA_KINDS, ENUMS, FIELD_TYPE_OPTIONS, METHODS, PROPERTIES, SERVER_OWNED, type MethodSpec } from '../../src/labels/schema.js';
import { allowedMethods, parseLabelPath } from '@opsctl/mock/services/labels/paths.js';
import { startMock } from '../helpers/mock.js';
import { labelsApi, mintToken, type Api } from '../helpers/labels.js';

/**
 * The label service's one table (src/labels/schema.ts) against Google's discovery document, the copy the
 * mock serves (a verbatim copy of shared/ref/drivelabels-v2beta-discovery.json, revision 20250602,
 * 140,720 characters): methods, parameters, request bodies, enums, updatable properties, output-only
 * properties and limits must agree, and every key of what the mock answers must exist in the schema.
 */
const DOC_PATH = fileURLToPath(new URL('../../packages/mock/src/services/labels/drivelabels-v2beta-discovery.json', import.meta.url));
const text = readFileSync(DOC_PATH, 'utf8');
const doc = JSON.parse(text);
const P = 'GoogleAppsDriveLabelsV2beta';
type Schema = { properties?: Record<string, any>; $ref?: string; items?: any; additionalProperties?: any; type?: string };
const schema = (name: string): Schema => doc.schemas[name.startsWith(P) || name.startsWith('Google') ? name : `${P}${name}`];
const props = (name: string) => Object.keys(schema(name).properties ?? {});
const outputOnly = (name: string) =>
  Object.entries(schema(name).properties ?? {})
    .filter(([, v]) => v.readOnly || /Output only/.test(v.description ?? ''))
    .map(([k]) => k);

/** Every method of the document, by its id (`labels.permissions.list`). */
function methods(resources: Record<string, any> = doc.resources): Array<[string, any]> {
  return Object.values(resources).flatMap((r: any) => [
    ...Object.values(r.methods ?? {}).map((m: any) => [m.id.replace(/^drivelabels\./, ''), m] as [string, any]),
    ...methods(r.resources ?? {}),
  ]);
}

describe('the label table agrees with the discovery document', () => {
  it('is the document the provenance note describes', () => {
    expect(text.length).toBe(140_720);
    expect(doc).toMatchObject({ id: 'drivelabels:v2beta', version: 'v2beta', revision: '20250602' });
  });

  it('has every method with its HTTP verb, path, parameters and request body, and no other', () => {
    const table = METHODS as Record<string, MethodSpec>;
    const fromDoc = methods();
    expect(Object.keys(table).sort()).toEqual(fromDoc.map(([id]) => id).sort());
    for (const [id, m] of fromDoc) {
      const row = table[id]!;
      expect({ id, http: row.http, path: row.path, params: [...row.params].sort() }).toEqual({
        id,
        http: m.httpMethod,
        path: m.flatPath.replace(/^v2beta\//, ''),
        params: Object.keys(m.parameters ?? {}).sort(),
      });
      const body = m.request?.$ref ? props(m.request.$ref) : undefined;
      // a method whose body is the resource itself (create, updatePermissions) takes that resource; the table lists bodies of request messages
      if (body && /Request$/.test(m.request.$ref)) expect({ id, body: [...(row.body ?? [])].sort() }).toEqual({ id, body: body.sort() });
      else expect({ id, body: row.body }).toEqual({ id, body: undefined });
    }
  });

  it('has each enum as the document defines it (the *_UNSPECIFIED values aside)', () => {
    for (const [where, values] of Object.entries(ENUMS)) {
      const [name, prop] = where.split('.');
      const fromDoc = (schema(name!).properties![prop!].enum as string[]).filter((v) => !/_UNSPECIFIED$/.test(v));
      expect({ where, values: [...values] }).toEqual({ where, values: fromDoc });
    }
  });

  it('has the delta request kinds, the updatable properties and the field types of the document', () => {
    expect([...DELTA_KINDS]).toEqual(props('DeltaUpdateLabelRequestRequest'));
    expect([...PROPERTIES.label].sort()).toEqual(props('LabelProperties').sort());
    expect([...PROPERTIES.field].sort()).toEqual(props('FieldProperties').sort());
    expect([...PROPERTIES.choice].sort()).toEqual(props('FieldSelectionOptionsChoiceProperties').sort());
    expect(Object.values(FIELD_TYPE_OPTIONS).sort()).toEqual(
      props('Field')
        .filter((k) => k.endsWith('Options'))
        .sort(),
    );
  });

  it('names exactly the output-only properties of a Label, a Field and a Choice', () => {
    expect([...SERVER_OWNED.label].sort()).toEqual(outputOnly('Label').sort());
    expect([...SERVER_OWNED.field].sort()).toEqual(outputOnly('Field').sort());
    expect([...SERVER_OWNED.choice].sort()).toEqual(outputOnly('FieldSelectionOptionsChoice').sort());
  });

  it('has default limits with exactly the keys of LabelLimits', () => {
    expect(unknownKeys(DEFAULT_LIMITS, 'LabelLimits')).toEqual([]);
    expect(Object.keys(DEFAULT_LIMITS).sort()).toEqual(props('LabelLimits').sort());
    expect(Object.keys(DEFAULT_LIMITS.fieldLimits).sort()).toEqual(props('FieldLimits').sort());
  });

  it('routes every method of the table in the mock', () => {
    for (const [id, m] of Object.entries(METHODS as Record<string, MethodSpec>)) {
      const path = m.path.replace('{labelsId}', 'abc').replace('{revisionsId}', '3').replace('{permissionsId}', '9');
      if (!path.startsWith('labels/')) continue; // labels (list/create), limits/label and users/…/capabilities are plain routes
      const parsed = parseLabelPath(path.slice('labels/'.length));
      expect({ id, parsed: Boolean(parsed) }).toEqual({ id, parsed: true });
      expect({ id, allowed: allowedMethods(parsed!).includes(m.http) }).toEqual({ id, allowed: true });
    }
  });
});

/** Keys of `value` (recursively, through $refs, lists and maps) that the schema does not define, as paths. */
function unknownKeys(value: unknown, name: string, path = ''): string[] {
  const s = schema(name);
  if (!value || typeof value !== 'object' || !s?.properties) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const p = s.properties[k];
    if (!p) {
      out.push(`${path}${k}`);
      continue;
    }
    if (p.$ref) out.push(...unknownKeys(v, p.$ref, `${path}${k}.`));
    else if (p.type === 'array' && p.items?.$ref && Array.isArray(v)) v.forEach((x, i) => out.push(...unknownKeys(x, p.items.$ref, `${path}${k}[${i}].`)));
  }
  return out;
}

describe('what the mock answers has only what the document defines', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let api: Api;
  beforeAll(async () => {
    mock = await startMock({ services: ['labels'] });
    api = labelsApi(mock, await mintToken(mock));
  });
  afterAll(async () => {
    await mock.close();
  });

  it('a full label with every field type, published, with a disabled field and choice, then disabled; its permissions, locks, limits and capabilities', async () => {
    const created = await api('POST', '/v2beta/labels?languageCode=en', {
      labelType: 'SHARED',
      properties: { title: 'Spec', description: 'every shape' },
      enabledAppSettings: { enabledApps: [{ app: 'DRIVE' }] },
      fields: [
        {
          properties: { displayName: 'Level', required: true },
          selectionOptions: {
            listOptions: { maxEntries: 2 },
            choices: [{ properties: { displayName: 'Low' } }, { properties: { displayName: 'High', description: 'd' } }],
          },
        },
        { properties: { displayName: 'When' }, dateOptions: { dateFormatType: 'SHORT_DATE' } },
        { properties: { displayName: 'Who' }, userOptions: { listOptions: {} } },
        { properties: { displayName: 'Note' }, textOptions: {} },
        { properties: { displayName: 'Count' }, integerOptions: {} },
      ],
    });
    expect(created.status).toBe(200);
    const name = created.body.name as string;
    expect((await api('POST', `/v2beta/${name}:publish`, {})).status).toBe(200);
    const level = created.body.fields[0];
    const delta = await api('POST', `/v2beta/${name}:delta`, {
      languageCode: 'en-GB',
      view: 'LABEL_VIEW_FULL',
      requests: [
        { disableField: { id: created.body.fields[4].id, disabledPolicy: { hideInSearch: true } } },
        { disableSelectionChoice: { fieldId: level.id, id: level.selectionOptions.choices[0].id, disabledPolicy: {} } },
      ],
    });
    expect(delta.status).toBe(200);
    expect(unknownKeys(delta.body, 'DeltaUpdateLabelResponse')).toEqual([]);
    expect((await api('POST', `/v2beta/${name}:publish`, {})).status).toBe(200);
    expect((await api('POST', `/v2beta/${name}:updateLabelCopyMode`, { copyMode: 'ALWAYS_COPY' })).status).toBe(200);
    const disabled = await api('POST', `/v2beta/${name}:disable`, { disabledPolicy: { showInApply: true } });
    expect(disabled.status).toBe(200);
    expect(unknownKeys(disabled.body, 'Label')).toEqual([]);
    const got = await api('GET', `/v2beta/${name}?view=LABEL_VIEW_FULL&languageCode=en`);
    expect(unknownKeys(got.body, 'Label')).toEqual([]);
    expect(
      (await api('POST', `/v2beta/${name}/permissions:batchUpdate`, { requests: [{ labelPermission: { email: 'bob@example.com', role: 'READER' } }] })).status,
    ).toBe(200);
    expect(unknownKeys((await api('GET', `/v2beta/${name}/permissions`)).body, 'ListLabelPermissionsResponse')).toEqual([]);
    expect(unknownKeys((await api('GET', '/v2beta/labels?view=LABEL_VIEW_FULL&publishedOnly=true')).body, 'ListLabelsResponse')).toEqual([]);
    expect(unknownKeys((await api('GET', `/v2beta/${name}/locks`)).body, 'ListLabelLocksResponse')).toEqual([]);
    expect(unknownKeys((await api('GET', '/v2beta/limits/label')).body, 'LabelLimits')).toEqual([]);
    expect(unknownKeys((await api('GET', '/v2beta/users/me/capabilities')).body, 'UserCapabilities')).toEqual([]);
  });

  it('refuses a languageCode that is no BCP-47 tag, and a value of the wrong type, with one message naming it', async () => {
    const r = await api('GET', '/v2beta/labels?languageCode=english%20please');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/languageCode "english please" is not a BCP-47 language code/);
    const d = await api('POST', '/v2beta/labels', { labelType: 'SHARED', properties: { title: 7 } });
    expect(d.status).toBe(400);
    expect(d.body.error.message).toBe('properties.title must be a string');
    // a value of the wrong type is named as such, once, not as missing
    expect((await api('POST', '/v2beta/labels', { labelType: 'SHARED', properties: 'Spec' })).body.error.message).toBe(
      'properties must be an object (with properties.title)',
    );
    const apps = await api('POST', '/v2beta/labels', { labelType: 'SHARED', properties: { title: 'A' }, enabledAppSettings: ['DRIVE'] });
    expect(apps.body.error.message).toBe('enabledAppSettings must be an object (with enabledApps)');
  });
});

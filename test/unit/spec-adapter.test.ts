import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { addVerb, defineVerb, flagText, toOptions, type OptionsOf, type RunModule } from '../../src/commands/spec.js';
import { spec as api } from '../../src/commands/api/api.spec.js';
import { spec as fieldsAdd } from '../../src/commands/labels/fields-add.spec.js';
import { spec as fieldsUpdate } from '../../src/commands/labels/fields-update.spec.js';
import { spec as permissionsSet } from '../../src/commands/labels/permissions-set.spec.js';
import { spec as kvPut } from '../../src/commands/kv/put.spec.js';
import { spec as kvSandboxUp } from '../../src/commands/kv/sandbox-up.spec.js';
import { spec as kvSnapshotStatus } from '../../src/commands/kv/snapshot-status.spec.js';
import { spec as kvUpgrade } from '../../src/commands/kv/upgrade.spec.js';
import { suggested } from '../../src/completion/suggest.js';
import { getSpec } from '../../src/commands/tracker/get.spec.js';
import { fieldFlags } from '../../src/commands/tracker/lib/field-flags.js';
import { updateSpec } from '../../src/commands/tracker/update.spec.js';
import { labels as trackerLabels } from '../../src/tracker/resources.js';
import { verbHarness, type VerbHarness } from '../helpers/httpmock.js';

/** What the test verb's run was given (the module `load` returns records it). */
let seen: unknown[] = [];
const load = (): RunModule =>
  Promise.resolve({
    run: (opts: never) => {
      seen.push(opts);
      return Promise.resolve();
    },
  });

const sample = defineVerb({
  name: 'sample',
  args: ['<label-id>', '[rest...]'],
  summary: 'a verb with one flag of each kind',
  flags: {
    dryRun: { type: 'boolean', short: 'n', help: 'change nothing' },
    required: { type: 'boolean', help: 'mark it required', negate: 'mark it optional' },
    browser: { type: 'negated', help: 'do not open a browser' },
    name: { type: 'string', value: 'text', help: 'the name', required: true },
    mode: { type: 'string', value: 'mode', help: 'the mode', choices: ['fast', 'safe'], default: 'safe' },
    list: { type: 'string', value: 'max', optional: true, help: 'a list, at most max' },
    method: { type: 'string', value: 'method', help: 'any case', choices: ['GET', 'POST'], parse: (v: string) => v.toUpperCase() as 'GET' | 'POST' },
    scopes: { type: 'list', value: 'scope', help: 'scopes' },
    header: { type: 'list', value: 'name:value', repeat: true, help: 'a header (repeatable)' },
  },
  load,
});

let dir: string;
let h: VerbHarness;
beforeEach(() => {
  seen = [];
  dir = mkdtempSync(join(tmpdir(), 'opsctl-unit-'));
  h = verbHarness({ OPSCTL_CONFIG_DIR: dir });
});
afterEach(async () => {
  await h.verify();
  rmSync(dir, { recursive: true, force: true });
});

/** Parses `argv` with the sample verb under a program, as the CLI does; commander's refusals are thrown. */
async function parse(...argv: string[]): Promise<unknown> {
  const program = new Command('opsctl').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  addVerb(program, h.ctx, sample).exitOverride();
  await program.parseAsync(['sample', ...argv], { from: 'user' });
  return seen[0];
}

describe('a verb spec: the options type is inferred from it', () => {
  it('positionals become camelCase fields; flags keep their spec keys with the types their kind, choices, default and required give', () => {
    type O = OptionsOf<typeof sample>;
    expectTypeOf<O['labelId']>().toEqualTypeOf<string>();
    expectTypeOf<O['rest']>().toEqualTypeOf<string[]>();
    expectTypeOf<O['dryRun']>().toEqualTypeOf<boolean>();
    expectTypeOf<O['required']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<O['browser']>().toEqualTypeOf<boolean>();
    expectTypeOf<O['name']>().toEqualTypeOf<string>();
    expectTypeOf<O['mode']>().toEqualTypeOf<'fast' | 'safe'>();
    expectTypeOf<O['list']>().toEqualTypeOf<string | true | undefined>();
    expectTypeOf<O['method']>().toEqualTypeOf<'GET' | 'POST' | undefined>();
    expectTypeOf<O['scopes']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<O>().toHaveProperty('header');
  });

  it('the real verbs: labels fields add, fields update, permissions set', () => {
    expectTypeOf<OptionsOf<typeof fieldsAdd>['type']>().toEqualTypeOf<'text' | 'integer' | 'date' | 'selection' | 'user'>();
    expectTypeOf<OptionsOf<typeof fieldsAdd>['dateFormat']>().toEqualTypeOf<'LONG_DATE' | 'SHORT_DATE' | undefined>();
    expectTypeOf<OptionsOf<typeof fieldsUpdate>['required']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<OptionsOf<typeof permissionsSet>>().toEqualTypeOf<{
      label: string;
      grants: string[];
      revision: string | undefined;
      admin: boolean;
      dryRun: boolean;
    }>();
  });

  it('the flags text commander is given', () => {
    expect(flagText('dryRun', { type: 'boolean', short: 'n', help: '' })).toBe('-n, --dry-run');
    expect(flagText('browser', { type: 'negated', help: '' })).toBe('--no-browser');
    expect(flagText('list', { type: 'string', value: 'max', optional: true, help: '' })).toBe('--list [max]');
    expect(flagText('scopes', { type: 'list', value: 'scope', help: '' })).toBe('--scopes <scope...>');
    expect(flagText('header', { type: 'list', value: 'h', repeat: true, help: '' })).toBe('--header <h>');
  });
});

describe('a verb spec: the adapter turns what commander parsed into those options', () => {
  it('defaults: absent booleans false, a negate-able one undefined, a --no- flag true, the default of a choice, absent lists undefined, a missing variadic []', async () => {
    expect(await parse('L1', '--name', 'x')).toEqual({
      labelId: 'L1',
      rest: [],
      dryRun: false,
      required: undefined,
      browser: true,
      name: 'x',
      mode: 'safe',
      list: undefined,
      method: undefined,
      scopes: undefined,
      header: undefined,
    });
  });

  it('every kind given: short flags, --no-, optional values, choices, the parser, variadic and repeated values', async () => {
    expect(
      await parse(
        'L1',
        'a',
        'b',
        '-n',
        '--no-required',
        '--no-browser',
        '--name',
        'x',
        '--mode',
        'fast',
        '--list',
        '--method',
        'post',
        '--scopes',
        's1',
        's2',
        '-n',
      ),
    ).toMatchObject({
      labelId: 'L1',
      rest: ['a', 'b'],
      dryRun: true,
      required: false,
      browser: false,
      mode: 'fast',
      list: true,
      method: 'POST',
      scopes: ['s1', 's2'],
    });
    seen = [];
    expect(await parse('L1', '--name', 'x', '--required', '--list', '5', '--header', 'A: 1', '--header', 'B: 2')).toMatchObject({
      required: true,
      list: '5',
      header: ['A: 1', 'B: 2'],
    });
  });

  it('commander refuses before the run: a missing required flag or argument, a value outside the choices', async () => {
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => (e instanceof CommanderError ? e.code : e),
      );
    expect(await refusal(parse('L1'))).toBe('commander.missingMandatoryOptionValue');
    expect(await refusal(parse('--name', 'x'))).toBe('commander.missingArgument');
    expect(await refusal(parse('L1', '--name', 'x', '--mode', 'slow'))).toBe('commander.invalidArgument');
    expect(seen).toEqual([]);
  });

  it('toOptions alone: a single string given for a variadic positional becomes a list', () => {
    expect(toOptions(defineVerb({ name: 'v', args: ['[items...]'], summary: '', load }), ['one'], {})).toEqual({ items: ['one'] });
  });

  it('api: -f and -F fill their lists with their place on the command line (the run merges them in the order typed); -X takes any case', async () => {
    const program = new Command('opsctl').exitOverride();
    addVerb(program, h.ctx, { ...api, load });
    await program.parseAsync(['api', '/x', '-F', 'b=2', '-f', 'a=1', '-F', 'c=3', '-X', 'post'], { from: 'user' });
    const opts = seen[0] as { method: string; rawField: Array<{ text: string; at: number }>; field: Array<{ text: string; at: number }> };
    expect(opts.method).toBe('POST');
    const order = [...opts.rawField, ...opts.field].sort((x, y) => x.at - y.at).map((f) => f.text);
    expect(order).toEqual(['b=2', 'a=1', 'c=3']);
  });

  /** Runs one real verb spec (with the recording run) under a program. */
  async function runSpec(spec: Parameters<typeof addVerb>[2], argv: string[]): Promise<Record<string, unknown>> {
    const program = new Command('opsctl').exitOverride();
    addVerb(program, h.ctx, { ...spec, load });
    await program.parseAsync([spec.name, ...argv], { from: 'user' });
    return seen[seen.length - 1] as Record<string, unknown>;
  }

  it('kv: an argument under another field (put <key> is kvKey: --key is the TLS key), a value flag with --no-, a hidden second spelling, suggestions', async () => {
    expectTypeOf<OptionsOf<typeof kvPut>['kvKey']>().toEqualTypeOf<string>();
    expectTypeOf<OptionsOf<typeof kvPut>['key']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<OptionsOf<typeof kvSnapshotStatus>['etcdctl']>().toEqualTypeOf<string | false | undefined>();
    expectTypeOf<OptionsOf<typeof kvSandboxUp>>().not.toHaveProperty('kvVersion');
    expect(await runSpec(kvPut, ['config/mode', 'on', '--key', 'client.key'])).toMatchObject({ kvKey: 'config/mode', value: 'on', key: 'client.key' });
    expect((await runSpec(kvSnapshotStatus, ['b.db', '--no-etcdctl'])).etcdctl).toBe(false);
    expect((await runSpec(kvSnapshotStatus, ['b.db', '--etcdctl', '/x/etcdctl'])).etcdctl).toBe('/x/etcdctl');
    expect((await runSpec(kvSnapshotStatus, ['b.db'])).etcdctl).toBeUndefined();
    const up = await runSpec(kvSandboxUp, ['--kv-version', '3.3']);
    expect(up).toMatchObject({ version: '3.3', members: '3' });
    expect(up).not.toHaveProperty('kvVersion');
    expect((await runSpec(kvSandboxUp, ['--version', '3.2', '--kv-version', '3.3'])).version).toBe('3.2');
    const program = new Command('opsctl');
    const to = addVerb(program, h.ctx, kvUpgrade).options.find((o) => o.long === '--to');
    expect(to && suggested(to)).toEqual(['3.3', '3.4', '3.5', '3.6', '3.7']);
    expect(to?.mandatory).toBe(true);
  });

  it('tracker: a verb built from a resource row is bound to it (resource), and <id|name> lands in id', async () => {
    const spec = getSpec(trackerLabels);
    expectTypeOf<Pick<OptionsOf<typeof spec>, 'id' | 'resource'>>().toEqualTypeOf<{ id: string; resource: string }>();
    expect(await runSpec(spec, ['bug'])).toEqual({ resource: 'labels', id: 'bug', web: false });
  });
});

describe('a verb spec: a boolean left undefined when absent, and flags from a data row in one record', () => {
  const tri = defineVerb({
    name: 'tri',
    summary: 'test verb',
    flags: {
      archived: { type: 'boolean', help: 'archive it', absent: 'undefined' },
      fields: {
        type: 'fields',
        flags: { name: { type: 'string', value: 'text', help: 'the name' }, pinned: { type: 'boolean', help: 'x', absent: 'undefined' } },
      },
    },
    load,
  });
  const run = async (spec: Parameters<typeof addVerb>[2], ...argv: string[]) => {
    seen = [];
    const program = new Command('opsctl').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    addVerb(program, h.ctx, spec).exitOverride();
    await program.parseAsync([spec.name, ...argv], { from: 'user' });
    return seen[0] as Record<string, unknown>;
  };

  it("types: `absent: 'undefined'` is boolean | undefined; a fields flag is a record", () => {
    type O = OptionsOf<typeof tri>;
    expectTypeOf<O['archived']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<O['fields']>().toEqualTypeOf<Record<string, unknown>>();
  });

  it('absent it is undefined (never false); given it is true; a fields flag keeps its values apart from the other options', async () => {
    expect(await run(tri)).toEqual({ archived: undefined, fields: { name: undefined, pinned: undefined } });
    expect(await run(tri, '--archived', '--pinned')).toEqual({ archived: true, fields: { name: undefined, pinned: true } });
  });

  it("a field table's create flags: an absent bool field is not sent as false; its update flags have --no-<field> for false", async () => {
    const table = { name: { type: 'string' }, archived: { type: 'bool' }, label_ids: { type: 'int[]' } } as const;
    const verb = (mode: 'create' | 'update') => defineVerb({ name: mode, summary: 'test verb', flags: { fields: fieldFlags(table, mode) }, load });
    expect((await run(verb('create'), '--name', 'bug')).fields).toEqual({ name: 'bug', archived: undefined, labelIds: undefined });
    expect((await run(verb('create'), '--archived', '--label-ids', '1,2')).fields).toEqual({ name: undefined, archived: true, labelIds: '1,2' });
    expect((await run(verb('update'), '--no-archived')).fields).toMatchObject({ archived: false });
    await expect(run(verb('create'), '--no-archived')).rejects.toThrow(/unknown option/);
    // a row's real spec, with the recording run in place of the one that calls the service
    expect(await run({ ...updateSpec(trackerLabels), load }, '7', '--color', '#ff0000')).toMatchObject({
      resource: 'labels',
      id: '7',
      fields: { color: '#ff0000' },
    });
  });
});

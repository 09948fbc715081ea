import { describe, expect, it } from 'vitest';
import type { CommandSpec, VerbSpec } from '../../src/commands/spec.js';
import { noun } from '../../src/commands/kv/noun.js';
import { parseClusterFile } from '../../src/commands/kv/lib/cluster-file.js';
import { carriedFlags, templatesFromFlags, type TemplateFlags } from '../../src/commands/kv/lib/shared.js';
import {
  CYCLING_VERBS,
  DRIVER_TEMPLATES,
  TEMPLATE_ROWS,
  type CommandTemplates,
  type TemplateKey,
  type TemplateRow,
} from '../../src/kv/cluster/cluster-file.js';
import { CommandDriver } from '../../src/kv/drivers/command.js';

/**
 * The command driver's templates are one table (kv/cluster/cluster-file.ts DRIVER_TEMPLATES): the cluster
 * file's schema and checks, the --*-cmd flags of the verbs that name them, the flags' reading and the
 * driver's own list are made from it, so a new template is one row.
 */

// every key of CommandTemplates is a row, or one of a preset's per-version maps (a compile-time check)
type Others = 'stageByVersion' | 'binByVersion' | 'startByVersion' | 'settingsByVersion' | 'restoreByVersion';
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const keysAreRows: Same<Exclude<keyof CommandTemplates, Others>, TemplateKey> = true;

/** Every verb of the kv noun, groups walked, by its command words (`snapshot save`). */
function kvVerbs(specs: readonly CommandSpec[], prefix = ''): Array<[string, VerbSpec]> {
  return specs.flatMap((s): Array<[string, VerbSpec]> => ('verbs' in s ? kvVerbs(s.verbs, `${prefix}${s.name} `) : [[`${prefix}${s.name}`, s]]));
}

const flagName = (option: string) => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
const required = TEMPLATE_ROWS.filter(([, row]) => row.required).map(([key]) => key);
const ok = (key: TemplateKey) => `ssh {host} echo ${key}${((DRIVER_TEMPLATES[key] as TemplateRow).extra ?? []).map((p) => ` {${p}}`).join('')}`;
const members = [{ name: 'm1', endpoint: 'http://10.0.0.1:2379', host: 'h1' }];
const file = (driver: Record<string, string>) => JSON.stringify({ members, driver: { type: 'command', ...driver } });
const allByKey = Object.fromEntries(TEMPLATE_ROWS.map(([key]) => [key, ok(key)]));
const allByFlag = Object.fromEntries(TEMPLATE_ROWS.map(([key, row]) => [row.flag, ok(key)])) as TemplateFlags;

describe('the command driver template table', () => {
  it('has one row per template, each with a flag of its own and at least one verb', () => {
    expect(keysAreRows).toBe(true);
    expect(TEMPLATE_ROWS.length).toBe(16);
    const flags = TEMPLATE_ROWS.map(([, row]) => row.flag);
    expect(new Set(flags).size).toBe(flags.length);
    expect(TEMPLATE_ROWS.filter(([, row]) => row.verbs.length === 0)).toEqual([]);
    expect(required).toEqual(['stop', 'start', 'running']);
  });

  it("each row's flag is on exactly the verbs it names, with the row's help: the shared ones in the table's order, then the verb's own", () => {
    const verbs = kvVerbs(noun.verbs);
    expect(verbs.length).toBeGreaterThan(30);
    const byFlag = new Map(TEMPLATE_ROWS.map(([key, row]) => [row.flag, { key, row }]));
    for (const [name, spec] of verbs) {
      const taken = Object.keys(spec.flags ?? {}).filter((f) => byFlag.has(f));
      const named = TEMPLATE_ROWS.filter(([, row]) => (row.verbs as readonly string[]).includes(name));
      const shared = (row: TemplateRow) => row.verbs.length === CYCLING_VERBS.length;
      expect(taken, name).toEqual([...named.filter(([, row]) => shared(row)), ...named.filter(([, row]) => !shared(row))].map(([, row]) => row.flag));
      for (const f of taken) expect(spec.flags?.[f], `${name} ${f}`).toEqual({ type: 'string', value: 'template', help: byFlag.get(f)!.row.help });
    }
    expect(verbs.filter(([name]) => (CYCLING_VERBS as readonly string[]).includes(name)).length).toBe(CYCLING_VERBS.length);
  });

  it('a carried flag is one every verb a printed command names takes (kv rollback, kv restore)', () => {
    const carried = TEMPLATE_ROWS.filter(([, row]) => row.carried);
    expect(carried.map(([key]) => key)).toEqual(['stop', 'start', 'running', 'v2Size', 'config', 'settings', 'dataDir', 'onHost', 'trial']);
    for (const [key, row] of carried) expect(row.verbs, key).toEqual(expect.arrayContaining(['rollback', 'restore']));
    const t = templatesFromFlags(allByFlag)!;
    expect(carriedFlags(t)).toEqual(carried.flatMap(([key, row]) => [flagName(row.flag), ok(key)]));
  });

  it('the cluster file takes every row by its key, needs the required ones, and checks each with its own placeholders', async () => {
    const parsed = await parseClusterFile(file(allByKey), 'c.json');
    expect(parsed.driver).toEqual({ type: 'command', ...allByKey });
    for (const key of required) {
      const { [key]: _gone, ...rest } = allByKey;
      await expect(parseClusterFile(file(rest), 'c.json'), key).rejects.toThrow(`--cluster c.json: driver.${key}: `);
    }
    for (const [key] of TEMPLATE_ROWS) {
      await expect(parseClusterFile(file({ ...allByKey, [key]: 'ssh {host} echo {nope}' }), 'c.json'), key).rejects.toThrow(
        `--cluster c.json: driver.${key}: unknown placeholder {nope}`,
      );
    }
  });

  it('the flags give every row, each checked under its flag name with its own placeholders, the required ones together', () => {
    expect(templatesFromFlags({})).toBeUndefined();
    expect(templatesFromFlags(allByFlag)).toEqual(allByKey);
    for (const key of required) {
      const row = DRIVER_TEMPLATES[key];
      const { [row.flag]: _gone, ...rest } = allByFlag as Record<string, string>;
      expect(() => templatesFromFlags(rest), key).toThrow(`${flagName(row.flag)} is missing`);
    }
    for (const [key, row] of TEMPLATE_ROWS) {
      expect(() => templatesFromFlags({ ...allByFlag, [row.flag]: 'ssh {host} echo {nope}' }), key).toThrow(
        `${flagName(row.flag)}: unknown placeholder {nope}`,
      );
    }
    expect(flagName(DRIVER_TEMPLATES.v2Size.flag)).toBe('--v2-size-cmd');
    expect(flagName(DRIVER_TEMPLATES.dataDir.flag)).toBe('--data-dir');
  });

  it('the driver compiles every command row before anything runs', () => {
    const exec = () => Promise.reject(new Error('nothing runs in this test'));
    const base = { stop: 'a', start: 'b', running: 'c' };
    for (const [key, row] of TEMPLATE_ROWS.filter(([, r]) => r.kind === 'command')) {
      expect(() => new CommandDriver({ ...base, [key]: "echo 'unclosed" }, exec as never), `${key} (${row.flag})`).toThrow(/template/);
    }
  });
});

import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

// Issue 25 item 1: the tracker mock's record types come from the document too. records.ts builds each
// record from its generated wire type (@opsctl/shared/tracker/types.ts) with `Stored<Wire, Computed, Own>`;
// these tests read it with TypeScript's type checker and fail when a record declares a field its wire type
// lacks, or types a shared field otherwise, unless the deviation is one of the store's listed ones below.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECORDS = `${ROOT}packages/mock/src/services/tracker/records.ts`;

/** Exported types of records.ts that are not built from a wire type: the state, the generic, and the document's gaps. */
const HAND = new Set(['TrackerState', 'Stored', 'Webhook']);

/** The store's own fields, which the wire type lacks (bookkeeping; each is commented in records.ts). */
const OWN: Record<string, string[]> = {
  Category: ['app_url'],
  EntityTemplate: ['app_url'],
  LinkedFile: ['app_url', 'pending_story_id'],
  TrackerDocument: ['content', 'created_by', 'entity_type', 'epic_ids', 'label_ids'],
  StoryContents: ['entity_type'],
  Epic: ['converted_from_story_id', 'num_points'],
  EpicComment: ['epic_id', 'parent_id'],
  Group: ['display_icon_id'],
  KeyResult: ['entity_type', 'updated_at'],
  Objective: ['category_ids'],
  Story: ['comment_ids', 'file_ids', 'linked_file_ids', 'num_tasks_completed', 'task_ids'],
  StoryHistory: ['story_id'],
};

/**
 * Shared fields the store types otherwise than the wire: `null` stored where the wire omits the field
 * (shape.ts), or a template's story contents kept as the body gave them (presentContents answers the wire's).
 */
const NOT_AS_WIRE: Record<string, string[]> = {
  EntityTemplate: ['story_contents'],
  Health: ['objective_id', 'text'],
  NoHealth: ['author_id', 'created_at', 'objective_id', 'text', 'updated_at'],
  Project: ['start_time'],
  Story: ['cycle_time', 'lead_time'],
  StoryContents: ['project_id'],
};

interface Derived {
  name: string;
  /** The wire type's name in types.ts (`T.Story` → `Story`). */
  wire: string;
  record: ts.Type;
  wireType: ts.Type;
}

let checker: ts.TypeChecker;
let source: ts.SourceFile;
let derived: Derived[];

/** The first `T.X` the declaration names: the wire type a `Stored<T.X, …>` (or a plain `T.X`) is built from. */
function wireName(node: ts.Node): string | undefined {
  if (ts.isTypeReferenceNode(node)) {
    if (ts.isQualifiedName(node.typeName) && ts.isIdentifier(node.typeName.left) && node.typeName.left.text === 'T') return node.typeName.right.text;
    if (ts.isIdentifier(node.typeName) && node.typeName.text === 'Stored') return node.typeArguments?.[0] ? wireName(node.typeArguments[0]) : undefined;
  }
  return undefined;
}

function namesT(node: ts.Node): boolean {
  if (ts.isQualifiedName(node) && ts.isIdentifier(node.left) && node.left.text === 'T') return true;
  return ts.forEachChild(node, namesT) ?? false;
}

const exported = (s: ts.Statement): s is ts.TypeAliasDeclaration | ts.InterfaceDeclaration =>
  (ts.isTypeAliasDeclaration(s) || ts.isInterfaceDeclaration(s)) && (s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false);

beforeAll(() => {
  const config = ts.getParsedCommandLineOfConfigFile(`${ROOT}tsconfig.json`, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('tsconfig.json did not parse');
  const program = ts.createProgram([RECORDS], { ...config.options, types: [], noEmit: true });
  checker = program.getTypeChecker();
  source = program.getSourceFile(RECORDS)!;
  const wireFile = program.getSourceFiles().find((f) => f.fileName.endsWith('packages/shared/src/tracker/types.ts'));
  if (!wireFile) throw new Error('records.ts does not import @opsctl/shared/tracker/types.js');
  const wires = new Map(checker.getExportsOfModule(checker.getSymbolAtLocation(wireFile)!).map((s) => [s.name, checker.getDeclaredTypeOfSymbol(s)]));
  derived = [];
  for (const s of source.statements) {
    if (!ts.isTypeAliasDeclaration(s) || !exported(s)) continue;
    const wire = wireName(s.type);
    if (!wire) continue;
    const wireType = wires.get(wire);
    if (!wireType) throw new Error(`records.ts's ${s.name.text} names T.${wire}, which types.ts does not export`);
    derived.push({ name: s.name.text, wire, record: checker.getTypeAtLocation(s.name), wireType });
  }
}, 60_000);

describe("the tracker mock's records are the document's record types", () => {
  it('every exported type of records.ts but the state and the listed hand types is built from a generated wire type', () => {
    const names = source.statements.filter(exported).map((s) => s.name.text);
    expect(names.length).toBeGreaterThan(25);
    const hand = source.statements.filter(exported).filter((s) => !HAND.has(s.name.text) && !namesT(ts.isTypeAliasDeclaration(s) ? s.type : s));
    expect(hand.map((s) => s.name.text)).toEqual([]);
    // every collection of the state holds a derived record (or a listed hand one)
    const state = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'TrackerState')!;
    const held = state.members
      .filter(ts.isPropertySignature)
      .map((m) => m.type)
      .filter((t): t is ts.ArrayTypeNode => t !== undefined && ts.isArrayTypeNode(t))
      .map((t) => t.elementType.getText(source));
    expect(held.length).toBe(23);
    expect(held.filter((n) => !HAND.has(n) && !derived.some((d) => d.name === n))).toEqual([]);
  });

  it('no record declares a field its wire type lacks, apart from the listed bookkeeping', () => {
    const extra: Record<string, string[]> = {};
    for (const d of derived) {
      const wire = new Set(checker.getPropertiesOfType(d.wireType).map((p) => p.name));
      const own = checker
        .getPropertiesOfType(d.record)
        .map((p) => p.name)
        .filter((n) => !wire.has(n))
        .sort();
      if (own.length > 0) extra[d.name] = own;
    }
    expect(extra).toEqual(OWN);
  });

  it("a field a record shares with its wire type has the wire's type (or a narrower one), apart from the listed null-where-omitted ones", () => {
    const other: Record<string, string[]> = {};
    let shared = 0;
    for (const d of derived) {
      for (const p of checker.getPropertiesOfType(d.record)) {
        const w = checker.getPropertyOfType(d.wireType, p.name);
        if (!w) continue;
        shared++;
        // (optional on the wire: the store may keep it, or leave it out)
        if (!checker.isTypeAssignableTo(checker.getTypeOfSymbol(p), checker.getTypeOfSymbol(w))) (other[d.name] ??= []).push(p.name);
      }
    }
    expect(shared).toBeGreaterThan(300);
    for (const list of Object.values(other)) list.sort();
    expect(other).toEqual(NOT_AS_WIRE);
  });

  it("enums are the document's: a story's type, a group's colour, a member's state", () => {
    const field = (record: string, name: string) => {
      const d = derived.find((x) => x.name === record)!;
      const type = checker.getTypeOfSymbol(checker.getPropertyOfType(d.record, name)!);
      return (type.isUnion() ? type.types : [type]).map((t) => (t.isStringLiteral() ? t.value : checker.typeToString(t))).sort();
    };
    expect(field('Story', 'story_type')).toEqual(['bug', 'chore', 'feature']);
    expect(field('Member', 'state')).toEqual(['disabled', 'full', 'imported', 'partial']);
    expect(field('Group', 'color_key')).toContain('midnight-blue');
    expect(field('KeyResult', 'type')).toEqual(['boolean', 'numeric', 'percent']);
  });
});

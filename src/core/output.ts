import { cutToWidth, neutralizeControls, textWidth, type IOStreams } from './io.js';
import { UsageError } from './errors.js';
import { itemAt } from './arrays.js';
import { closest } from './closest.js';

export { closest };

/** A column of a table: which field, its heading, and how to read it from a row. */
export interface Column<R = never> {
  key: string;
  header?: string;
  /** Reads the cell from one row of the result the column came with (R: that row's type). */
  get?: (row: R) => unknown;
}

/** What a command returns; the renderer decides how it looks (table, TSV, key/value, JSON). */
export interface CommandResult {
  data?: unknown;
  /** Columns for a list, or the fields (in order) for a single record. */
  columns?: Column[];
  /** A human line for stderr after the data (e.g. "Deleted label 12"). Not printed with --json. */
  message?: string;
  /** Human-only text for stdout instead of a table (e.g. a plan, a report). --json prints `data` instead. */
  text?: string;
  /** Exit code when not 0 but not an error either. */
  exitCode?: number;
}

export interface RenderOptions {
  /** `--json` (true) or `--json=a,b,c` (field list). */
  json?: boolean | string;
  /** `--jq EXPR`: filter the JSON through jq (implies JSON); see renderJq. */
  jq?: string;
}

/**
 * `--jq EXPR` (as gh): the JSON a command would print (after `--json=fields`, if given) goes through
 * jq, WebAssembly from the `jq-wasm` package (its `inline` entry, bundled), loaded only here. Strings print raw (jq -r), anything
 * else as JSON: indented on a terminal, one line per result when piped. A bad expression, or one that
 * fails on this data, is a usage error (exit 2) carrying jq's own message.
 */
export async function renderJq(io: IOStreams, result: CommandResult, opts: RenderOptions & { jq: string }): Promise<void> {
  if (result.data === undefined) return;
  const data = typeof opts.json === 'string' ? pickFields(result.data, parseFieldList(opts.json)) : result.data;
  const { raw } = await loadJq();
  const flags = io.isStdoutTTY ? ['-r'] : ['-r', '-c'];
  // JSON text in, so the input is exactly what --json prints (no undefined, no class instances)
  const got = await raw(JSON.stringify(data), opts.jq, flags);
  if (got.exitCode !== 0) throw jqError(got);
  const text = got.stdout.replace(/\n$/, '');
  if (text) io.out(text);
}

/** jq (WebAssembly), compiled as the entry point chose (core/wasm.ts: Liftoff only). */
async function loadJq(): Promise<typeof import('jq-wasm/inline')> {
  (await import('./wasm.js')).beforeWasm();
  return import('jq-wasm/inline');
}

/**
 * Compiles a `--jq` expression without running it (inside a branch never taken), so a typo fails
 * with exit 2 before the command sends anything: `create --jq '.['` creates nothing.
 */
export async function checkJq(expression: string): Promise<void> {
  const { raw } = await loadJq();
  const got = await raw(null, `if false then (${expression}\n) else empty end`, ['-n']);
  if (got.exitCode !== 3) return;
  // jq's message about the expression as written (line and column of the user's text, not the wrapper's)
  const bare = await raw(null, expression, ['-n']);
  throw jqError(bare.exitCode === 3 ? bare : got);
}

function jqError(got: { stderr: string; exitCode: number }): UsageError {
  const message = got.stderr
    .trim()
    .replace(/^jq: error(?: \(at [^)]*\))?: /, '')
    .replace(/\njq: \d+ compile errors?$/, '');
  return new UsageError(`--jq: ${message || `jq exited with ${got.exitCode}`}`, {
    code: 'jq',
    field: 'jq',
    hint:
      got.exitCode === 3
        ? 'fix the jq expression (see the jq manual); nothing was sent'
        : 'the expression does not fit this data: look at it with --json, then adjust the expression',
  });
}

export function render(io: IOStreams, result: CommandResult, opts: RenderOptions): void {
  if (opts.json !== undefined && opts.json !== false) {
    if (result.data === undefined) return;
    const data = typeof opts.json === 'string' ? pickFields(result.data, parseFieldList(opts.json)) : result.data;
    const json = JSON.stringify(data, null, 2);
    // JSON escapes C0 itself; on a terminal C1 and the bidi controls are escaped too (\u202e: the same JSON to a parser)
    io.out(io.isStdoutTTY ? escapeForTerminal(json) : json);
    return;
  }
  if (result.text !== undefined) {
    // human text may carry a server's words (a kv value, a member's error) next to our own colours
    if (result.text) io.out(io.safeOut(result.text, { keepColours: true }));
  } else if (result.data !== undefined && result.data !== null) {
    const text = formatHuman(io, result.data, result.columns);
    if (text) io.out(text);
  }
  if (result.message) io.success(result.message);
}

/** JSON text with DEL, C1 and the bidirectional controls written as \\uXXXX escapes (they can occur only inside its strings). */
export function escapeForTerminal(json: string): string {
  return json.replace(/[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function parseFieldList(spec: string): string[] {
  const fields = spec
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  if (fields.length === 0) throw new UsageError('--json=: give a comma-separated list of fields after "=" (--json=id,name), or plain --json for all fields');
  return fields;
}

/** Keep only `fields` of each record; an unknown field is an error that lists the known ones. */
export function pickFields(data: unknown, fields: string[]): unknown {
  const pickOne = (record: unknown): unknown => {
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return record;
    const rec = record as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of fields) out[f] = rec[f] ?? null;
    return out;
  };
  const sample: unknown = Array.isArray(data) ? (data as unknown[])[0] : data;
  if (sample && typeof sample === 'object' && !Array.isArray(sample)) {
    const known = Object.keys(sample);
    const unknown = fields.filter((f) => !known.includes(f));
    if (unknown.length > 0) {
      const guesses = unknown.map((f) => closest(f, known)).filter((g): g is string => g !== undefined);
      const guess = guesses.length === unknown.length ? ` (did you mean ${guesses.join(', ')}?)` : '';
      throw new UsageError(`--json: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}${guess}`, {
        field: 'json',
        hint: `available fields: ${known.join(', ')}`,
      });
    }
  }
  return Array.isArray(data) ? data.map(pickOne) : pickOne(data);
}

/**
 * One cell of a table or record line: scalars as they are, a list of scalars comma-joined, and
 * anything nested summarised (`3 items`, `2 fields`, or `k=v` pairs of a flat object) rather than
 * printed as JSON; `--json` has the full data. Tabs and line breaks become spaces.
 */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object')) return value.map((v) => formatCell(v)).join(',');
    return `${value.length} item${value.length === 1 ? '' : 's'}`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > 0 && entries.length <= 4 && entries.every(([, v]) => v === null || typeof v !== 'object')) {
      return entries.map(([k, v]) => `${k}=${formatCell(v)}`).join(' ');
    }
    return `${entries.length} field${entries.length === 1 ? '' : 's'}`;
  }
  return scalarText(value).replace(/[\t\n\r]+/g, ' ');
}

/** String(value) of a value that is neither null, undefined nor an object. */
function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'symbol' || typeof value === 'function') return value.toString();
  return '';
}

function formatHuman(io: IOStreams, data: unknown, columns?: Column[]): string {
  if (Array.isArray(data)) return formatTable(io, data, columns ?? inferColumns(data));
  if (typeof data === 'object' && data !== null) return formatRecord(io, data as Record<string, unknown>, columns);
  return String(data);
}

function inferColumns(rows: unknown[]): Column[] {
  const first = rows.find((r) => r && typeof r === 'object') as Record<string, unknown> | undefined;
  if (!first) return [{ key: 'value', get: (r) => r }];
  return Object.keys(first)
    .filter((k) => typeof first[k] !== 'object' || first[k] === null)
    .slice(0, 6)
    .map((key) => ({ key }));
}

function cellOf(row: unknown, col: Column): string {
  // a column's get was written for the rows of the result it came with: this row is one of them
  const v = col.get ? (col.get as (r: unknown) => unknown)(row) : fieldOf(row, col.key);
  return formatCell(v);
}

/** `row[key]` of an object row (undefined for anything else). */
function fieldOf(row: unknown, key: string): unknown {
  return row !== null && typeof row === 'object' ? (row as Record<string, unknown>)[key] : undefined;
}

/** Narrowest a column is cut to (or its header, or its widest cell, if narrower). */
const MIN_COLUMN = 8;
const GAP = 2;

/**
 * Column widths for a terminal `width` columns wide: the natural widths when the row fits (or the
 * width is unknown: 0), else the widest columns are cut down together to one common cap, never below
 * MIN_COLUMN or the header (keptColumns has already dropped the columns that could not fit at that).
 */
export function fitColumns(natural: number[], headers: number[], width: number): number[] {
  const gaps = GAP * Math.max(0, natural.length - 1);
  const total = natural.reduce((a, b) => a + b, 0) + gaps;
  if (width <= 0 || total <= width) return natural;
  const floor = natural.map((w, i) => Math.min(w, Math.max(MIN_COLUMN, itemAt(headers, i))));
  const at = (cap: number) => natural.map((w, i) => Math.max(itemAt(floor, i), Math.min(w, cap)));
  const sum = (ws: number[]) => ws.reduce((a, b) => a + b, 0) + gaps;
  // the largest cap that fits
  let lo = 0;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sum(at(mid)) <= width) lo = mid;
    else hi = mid - 1;
  }
  const widths = at(lo);
  // hand the remainder (the cap is a whole number) to the cut columns, left to right
  let spare = width - sum(widths);
  for (let i = 0; i < widths.length && spare > 0; i++) {
    const add = Math.min(spare, itemAt(natural, i) - itemAt(widths, i));
    widths[i] = itemAt(widths, i) + add;
    spare -= add;
  }
  return widths;
}

/**
 * The columns (by index) a table keeps on a terminal `width` columns wide: all of them when their
 * narrowest widths fit (or the width is unknown: 0), else the columns of least value go first: the
 * last ones (a table's columns are listed most telling first: id, name, then detail), never the first.
 * So a row never wraps: what is left is cut to fit.
 */
export function keptColumns(natural: number[], headers: number[], width: number): number[] {
  const keep = natural.map((_, i) => i);
  if (width <= 0) return keep;
  const floorOf = (i: number) => Math.min(itemAt(natural, i), Math.max(MIN_COLUMN, itemAt(headers, i)));
  const need = () => keep.reduce((sum, i) => sum + floorOf(i), 0) + GAP * Math.max(0, keep.length - 1);
  while (keep.length > 1 && need() > width) keep.pop();
  return keep;
}

/**
 * TTY: aligned columns with a bold header, as wide as the terminal (cells are cut only when a row
 * would not fit; no cut when the width is unknown), server text with its control characters shown,
 * not obeyed. Piped: TSV without header or colour (stable for cut/awk).
 */
export function formatTable(io: IOStreams, rows: unknown[], columns: Column[]): string {
  if (!io.isStdoutTTY) {
    return rows.map((row) => columns.map((c) => cellOf(row, c)).join('\t')).join('\n');
  }
  if (rows.length === 0) return io.color.dim('(none)');
  const width = io.columns('stdout');
  const allHeaders = columns.map((c) => (c.header ?? c.key).toUpperCase());
  const allFull = rows.map((row) => columns.map((c) => neutralizeControls(cellOf(row, c))));
  const allNatural = allHeaders.map((h, i) => Math.max(textWidth(h), ...allFull.map((r) => textWidth(itemAt(r, i)))));
  const keep = keptColumns(
    allNatural,
    allHeaders.map((h) => textWidth(h)),
    width,
  );
  const headers = keep.map((i) => itemAt(allHeaders, i));
  const full = allFull.map((r) => keep.map((i) => itemAt(r, i)));
  const natural = keep.map((i) => itemAt(allNatural, i));
  const widths = fitColumns(
    natural,
    headers.map((h) => textWidth(h)),
    width,
  ).map((w) => (width > 0 ? Math.min(w, width) : w));
  const cells = full.map((r) => r.map((text, i) => cutToWidth(text, itemAt(widths, i))));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (i === vals.length - 1 ? v : v + ' '.repeat(Math.max(0, itemAt(widths, i) - textWidth(v)))))
      .join(' '.repeat(GAP))
      .trimEnd();
  return [io.color.bold(line(headers.map((h, i) => cutToWidth(h, itemAt(widths, i))))), ...cells.map(line)].join('\n');
}

function formatRecord(io: IOStreams, record: Record<string, unknown>, columns?: Column[]): string {
  const cols: Column[] = columns ?? recordColumns(record);
  if (!io.isStdoutTTY) return cols.map((c) => `${c.header ?? c.key}\t${cellOf(record, c)}`).join('\n');
  const width = Math.max(...cols.map((c) => (c.header ?? c.key).length));
  return cols.map((c) => `${io.color.bold(neutralizeControls(c.header ?? c.key).padEnd(width))}  ${neutralizeControls(cellOf(record, c))}`).join('\n');
}

/**
 * The rows of a record's key/value view: nested plain objects become dotted keys (`stats.num_epics`),
 * so a person (or `grep`) sees each value on its own line rather than a JSON blob.
 */
function recordColumns(record: Record<string, unknown>, prefix = ''): Column[] {
  return Object.entries(record).flatMap(([key, value]): Column[] => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
      return recordColumns(value as Record<string, unknown>, path);
    }
    return [{ key: path, get: (row: Record<string, unknown>) => path.split('.').reduce<unknown>((v, k) => fieldOf(v, k), row) }];
  });
}

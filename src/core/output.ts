import type { IOStreams } from './io.js';
import { UsageError } from './errors.js';

/** A column of a table: which field, its heading, and how to read it from a row. */
export interface Column {
  key: string;
  header?: string;
  get?: (row: any) => unknown;
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
  /** `--json` (true) or `--json a,b,c` (field list). */
  json?: boolean | string;
}

const MAX_TTY_CELL = 60;

export function render(io: IOStreams, result: CommandResult, opts: RenderOptions): void {
  if (opts.json !== undefined && opts.json !== false) {
    if (result.data === undefined) return;
    const data = typeof opts.json === 'string' ? pickFields(result.data, parseFieldList(opts.json)) : result.data;
    io.out(JSON.stringify(data, null, 2));
    return;
  }
  if (result.text !== undefined) {
    if (result.text) io.out(result.text);
  } else if (result.data !== undefined && result.data !== null) {
    const text = formatHuman(io, result.data, result.columns);
    if (text) io.out(text);
  }
  if (result.message) io.success(result.message);
}

export function parseFieldList(spec: string): string[] {
  const fields = spec
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  if (fields.length === 0) throw new UsageError('--json: give a comma-separated list of fields, or no value for all fields');
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
  const sample = Array.isArray(data) ? data[0] : data;
  if (sample && typeof sample === 'object' && !Array.isArray(sample)) {
    const known = Object.keys(sample);
    const unknown = fields.filter((f) => !known.includes(f));
    if (unknown.length > 0) {
      throw new UsageError(`--json: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`, {
        hint: `available fields: ${known.join(', ')}`,
      });
    }
  }
  return Array.isArray(data) ? data.map(pickOne) : pickOne(data);
}

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => formatCell(v)).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/[\t\n\r]+/g, ' ');
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

function cellOf(row: any, col: Column): string {
  const v = col.get ? col.get(row) : row?.[col.key];
  return formatCell(v);
}

/** TTY: aligned columns with a bold header; piped: TSV without header or colour (stable for cut/awk). */
export function formatTable(io: IOStreams, rows: unknown[], columns: Column[]): string {
  if (!io.isStdoutTTY) {
    return rows.map((row) => columns.map((c) => cellOf(row, c)).join('\t')).join('\n');
  }
  if (rows.length === 0) return io.color.dim('(none)');
  const headers = columns.map((c) => (c.header ?? c.key).toUpperCase());
  const cells = rows.map((row) => columns.map((c) => truncate(cellOf(row, c), MAX_TTY_CELL)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [io.color.bold(line(headers)), ...cells.map(line)].join('\n');
}

function formatRecord(io: IOStreams, record: Record<string, unknown>, columns?: Column[]): string {
  const cols: Column[] = columns ?? recordColumns(record);
  if (!io.isStdoutTTY) return cols.map((c) => `${c.header ?? c.key}\t${cellOf(record, c)}`).join('\n');
  const width = Math.max(...cols.map((c) => (c.header ?? c.key).length));
  return cols.map((c) => `${io.color.bold((c.header ?? c.key).padEnd(width))}  ${cellOf(record, c)}`).join('\n');
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
    return [{ key: path, get: (row: Record<string, unknown>) => path.split('.').reduce<any>((v, k) => v?.[k], row) }];
  });
}

function truncate(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

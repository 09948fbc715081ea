/**
 * etcdctl's `-w json` and `-w table`, byte for byte where opsctl prints them (member list, endpoint status).
 *
 * `-w json` is the gRPC response as Go's encoding/json writes it: the fields in the message's order, zero
 * values left out, the 64-bit integers as bare numbers (a cluster id does not fit a double: never parsed
 * here). The gateway answers with the same message in the same order and the same field names, zero values
 * left out, but the 64-bit integers as strings: those, and only those, lose their quotes.
 *
 * `-w table` is olekukonko/tablewriter as etcdctl sets it up: a `+---+` rule above and below the header and
 * at the end, the header upper-case and centred, every cell right-aligned, one space of padding.
 */

/** The 64-bit integer fields of the responses opsctl prints as etcdctl does (ResponseHeader, Member, StatusResponse). */
const INT64_FIELDS = [
  'cluster_id',
  'member_id',
  'revision',
  'raft_term',
  'ID',
  'dbSize',
  'leader',
  'raftIndex',
  'raftTerm',
  'raftAppliedIndex',
  'dbSizeInUse',
  'dbSizeQuota',
];
const QUOTED_INT64 = new RegExp(`"(${INT64_FIELDS.join('|')})":"(-?\\d+)"`, 'g');

/** A gateway response's JSON text as etcdctl -w json prints the same response (its 64-bit integers unquoted). */
export function etcdctlJson(gatewayText: string): string {
  // (inside a string value a quote is escaped, so `"ID":"` never matches there)
  return gatewayText.trim().replace(QUOTED_INT64, '"$1":$2');
}

/** etcdctl endpoint status -w json: one object per endpoint that answered, `{"Endpoint":…,"Status":…}`. */
export function endpointStatusJson(rows: ReadonlyArray<{ endpoint: string; raw: string }>): string {
  return `[${rows.map((r) => `{"Endpoint":${JSON.stringify(r.endpoint)},"Status":${etcdctlJson(r.raw)}}`).join(',')}]`;
}

/** etcdctl's boxed table of `rows` under `headers` (as etcdctl names its columns; upper-cased here). */
export function boxTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const width = (s: string) => [...s].length;
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const centred = (s: string, w: number) => {
    const pad = w - width(s);
    const left = Math.floor(pad / 2);
    return `${' '.repeat(left)}${s}${' '.repeat(pad - left)}`;
  };
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    rule,
    line(headers.map((h, i) => centred(h.toUpperCase(), widths[i]!))),
    rule,
    ...rows.map((r) => line(widths.map((w, i) => `${' '.repeat(w - width(r[i] ?? ''))}${r[i] ?? ''}`))),
    rule,
  ].join('\n');
}

/** etcdctl member list's columns (3.4 and later; 3.2 and 3.3 had no learners). */
export const MEMBER_HEADERS = ['ID', 'Status', 'Name', 'Peer Addrs', 'Client Addrs', 'Is Learner'];

/** etcdctl endpoint status's columns by the number its line has: 3.6's 16, 3.4 and 3.5's 10, 3.2 and 3.3's 7 (statusRow). */
export function statusHeaders(columns: number): string[] {
  if (columns >= 16)
    return [
      'Endpoint',
      'ID',
      'Version',
      'Storage Version',
      'DB Size',
      'In Use',
      'Percentage Not In Use',
      'Quota',
      'Is Leader',
      'Is Learner',
      'Raft Term',
      'Raft Index',
      'Raft Applied Index',
      'Errors',
      'Downgrade Target Version',
      'Downgrade Enabled',
    ];
  if (columns >= 10) return ['Endpoint', 'ID', 'Version', 'DB Size', 'Is Leader', 'Is Learner', 'Raft Term', 'Raft Index', 'Raft Applied Index', 'Errors'];
  return ['Endpoint', 'ID', 'Version', 'DB Size', 'Is Leader', 'Raft Term', 'Raft Index'];
}

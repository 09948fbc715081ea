import type { Route } from './service.js';

/** A path segment a plain route or path may have: unreserved characters only (no percent-escape, no `;`, no `:`). */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** A whole-segment parameter of a route pattern (`:id`). */
const PARAM_SEGMENT = /^:[A-Za-z0-9_]+$/;
/** find-my-way's default `maxParamLength`: a longer parameter value does not match there. */
const MAX_PARAM_LENGTH = 100;

interface PlainRoute {
  route: Route;
  /** Each segment: the literal, or the parameter's name after a `:`. */
  segments: string[];
}

/**
 * A service's routes as plain patterns (literal segments and whole-segment `:params`), by method; undefined
 * when one of them is anything else (a wildcard, a regular expression, a literal colon, a parameter inside a
 * segment): that service's requests are always routed by find-my-way.
 */
export type PlainTable = Map<string, PlainRoute[]> | undefined;

export function plainTable(routes: readonly Route[]): PlainTable {
  const table = new Map<string, PlainRoute[]>();
  for (const route of routes) {
    const segments = route.path.split('/').slice(1);
    if (!segments.every((s) => PLAIN_SEGMENT.test(s) || PARAM_SEGMENT.test(s))) return undefined;
    const list = table.get(route.method) ?? [];
    list.push({ route, segments });
    table.set(route.method, list);
  }
  return table;
}

/**
 * The route find-my-way (case-sensitive, trailing slash ignored) would find for `method` on `pathname`, found
 * without building the router: a command that makes one in-process request then compiles none of it. Only
 * a path of plain segments is decided here, and only a match: undefined means "ask the router" (no route of
 * this method matched, a percent-escape, an empty or overlong segment, a table that is not plain), which
 * then decides the 404 or 405 as before. Among the routes that match, the router prefers at each segment,
 * left to right, a literal to a parameter: so does this.
 */
export function plainRoute(table: PlainTable, method: string, pathname: string): { route: Route; params: Record<string, string> } | undefined {
  const list = table?.get(method);
  if (!list) return undefined;
  const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  const parts = path.split('/').slice(1);
  if (!parts.every((p) => PLAIN_SEGMENT.test(p))) return undefined;
  let best: PlainRoute | undefined;
  for (const candidate of list) {
    if (!matches(candidate.segments, parts)) continue;
    if (!best || moreLiteral(candidate.segments, best.segments)) best = candidate;
  }
  if (!best) return undefined;
  const params = Object.create(null) as Record<string, string>;
  best.segments.forEach((s, i) => {
    if (s.startsWith(':')) params[s.slice(1)] = parts[i]!;
  });
  return { route: best.route, params };
}

function matches(segments: readonly string[], parts: readonly string[]): boolean {
  if (segments.length !== parts.length) return false;
  return segments.every((s, i) => (s.startsWith(':') ? parts[i]!.length <= MAX_PARAM_LENGTH : s === parts[i]));
}

/** True when `a` has a literal at the first segment where the two differ in kind. */
function moreLiteral(a: readonly string[], b: readonly string[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const [pa, pb] = [a[i]!.startsWith(':'), b[i]!.startsWith(':')];
    if (pa !== pb) return pb;
  }
  return false;
}

import { InvalidArgumentError } from 'commander';
import { NOUN_SUMMARIES } from '../nouns.js';
import { defineVerb, type RunModule } from '../spec.js';
import type { FieldArg } from './lib/fields.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/** A `-f` or `-F` value with its place on the command line: the two flags fill one list in the order typed (key[]=a -F key[]=1 keeps its order). */
export type TypedField = FieldArg & { at: number };
let typed = 0;
const field =
  ({ raw }: { raw: boolean }) =>
  (text: string, previous: TypedField[] | undefined): TypedField[] => [...(previous ?? []), { raw, text, at: typed++ }];

export const spec = defineVerb({
  name: 'api',
  args: [{ name: '<path>', help: 'the request path, e.g. /media/v3/channels (the leading / may be left out, as with gh), or a full URL on the same service' }],
  summary: NOUN_SUMMARIES.api,
  flags: {
    method: {
      type: 'string',
      short: 'X',
      value: 'method',
      help: 'HTTP method (any case: -X post)',
      // the help and completions list METHODS, and any case is accepted
      choices: METHODS,
      parse: (value: string): Method => {
        const method = value.toUpperCase();
        if (!(METHODS as readonly string[]).includes(method)) throw new InvalidArgumentError(`Allowed choices are ${METHODS.join(', ')} (any case).`);
        return method as Method;
      },
      default: 'GET',
    },
    rawField: {
      type: 'list',
      short: 'f',
      value: 'key=value',
      repeat: true,
      help: 'a string parameter: query string for GET/DELETE, JSON body field otherwise (repeatable)',
      collect: field({ raw: true }),
    },
    field: {
      type: 'list',
      short: 'F',
      value: 'key=value',
      repeat: true,
      help: "a typed parameter: true, false, null and whole numbers as JSON, @file (@- stdin) the file's text; key[sub]=v nests, key[]=v appends (repeatable)",
      collect: field({ raw: false }),
    },
    header: { type: 'list', short: 'H', value: 'name:value', repeat: true, help: 'an HTTP request header, e.g. -H "Accept: text/plain" (repeatable)' },
    input: { type: 'string', value: 'file', help: 'send this file as the JSON body ("-" reads stdin)' },
    include: { type: 'boolean', short: 'i', help: 'print the HTTP status line and response headers before the body' },
    silent: { type: 'boolean', help: 'print no response body' },
    paginate: {
      type: 'boolean',
      help: "follow the next page (Link header, the answer's next URL or page number, nextPageToken or cursor) until the last",
    },
    maxPages: {
      type: 'string',
      value: 'n',
      help: 'with --paginate: stop with an error after this many pages, 10000 unless given (a guard against a service paging without end)',
      parse: (value: string): number => {
        if (!/^[1-9]\d{0,6}$/.test(value)) throw new InvalidArgumentError('a whole number of pages from 1 to 9999999, e.g. --max-pages 500');
        return Number(value);
      },
    },
    slurp: { type: 'boolean', help: "with --paginate: one JSON array of the pages, as gh gives it (read the items with --jq '.[][]' or .[].data[])" },
    slurpItems: { type: 'boolean', help: "with --paginate: one flat JSON array of every page's items (the data/items/… list of each)" },
    service: {
      type: 'string',
      value: 'service',
      help: 'which service to call (its endpoint and credentials)',
      choices: ['api', 'labels', 'tracker'],
      default: 'api',
    },
  },
  examples: [
    'opsctl api /media/v3/channels -f part=snippet -f mine=true',
    'opsctl api /v2/labels --service labels -f view=LABEL_VIEW_FULL',
    'opsctl api /api/v3/labels --service tracker -X POST -f name=bug',
    "opsctl api /api/v3/search/stories --service tracker -f query=login --paginate --slurp-items --jq 'length'",
    "opsctl api /api/v3/epics/paginated --service tracker -F page_size=50 --paginate --slurp --jq '[.[].data[]] | length'",
    'opsctl api /api/v3/stories --service tracker -X POST -f name=Hi -F estimate=3 -F "label_ids[]=7" -F description=@notes.md',
    'opsctl api /api/v3/labels --service tracker -i -H "Accept: application/json"',
  ],
  load: (): RunModule => import('./api.js'),
});

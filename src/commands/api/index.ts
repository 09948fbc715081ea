import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import type { FieldArg } from './fields.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const collect = (value: string, prev: string[] = []) => [...prev, value];

export function register(program: Command, ctx: Context): void {
  // -f and -F fill one list in the order typed (commander keeps each flag's values apart): key[]=a -F key[]=1 keeps its order
  const fields: FieldArg[] = [];
  const field = (raw: boolean) => (text: string) => {
    fields.push({ raw, text });
    return fields;
  };
  examples(
    program
      .command('api')
      .description(NOUN_SUMMARIES.api)
      .argument('<path>', 'the request path, e.g. /media/v3/channels (or a full URL on the same service)')
      .addOption(
        new Option('-X, --method <method>', 'HTTP method (any case: -X post)')
          .choices(METHODS)
          // after choices(): the help and completions list METHODS, and any case is accepted
          .argParser((value) => {
            const method = value.toUpperCase();
            if (!METHODS.includes(method)) throw new InvalidArgumentError(`Allowed choices are ${METHODS.join(', ')} (any case).`);
            return method;
          })
          .default('GET'),
      )
      .option('-f, --raw-field <key=value>', 'a string parameter: query string for GET/DELETE, JSON body field otherwise (repeatable)', field(true))
      .option(
        '-F, --field <key=value>',
        "a typed parameter: true, false, null and whole numbers as JSON, @file (@- stdin) the file's text; key[sub]=v nests, key[]=v appends (repeatable)",
        field(false),
      )
      .option('-H, --header <name:value>', 'an HTTP request header, e.g. -H "Accept: text/plain" (repeatable)', collect)
      .option('--input <file>', 'send this file as the JSON body ("-" reads stdin)')
      .option('-i, --include', 'print the HTTP status line and response headers before the body')
      .option('--silent', 'print no response body')
      .option('--paginate', "follow the next page (Link header, the answer's next, nextPageToken or cursor) until the last")
      .option('--slurp', "with --paginate: one JSON array of every page's items")
      .addOption(new Option('--service <service>', 'which service to call (its endpoint and credentials)').choices(['api', 'labels', 'tracker']).default('api'))
      .action(
        lazyAction(
          ctx,
          () => import('./call.js'),
          ([path]: [string], o) => ({
            path,
            method: String(o.method).toUpperCase() as 'GET',
            fields: fields.slice(),
            headers: (o.header as string[] | undefined) ?? [],
            input: o.input,
            service: o.service,
            include: Boolean(o.include),
            silent: Boolean(o.silent),
            paginate: Boolean(o.paginate),
            slurp: Boolean(o.slurp),
          }),
        ),
      ),
    'opsctl api /media/v3/channels -f part=snippet -f mine=true',
    'opsctl api /v2/labels --service labels -f view=LABEL_VIEW_FULL',
    'opsctl api /api/v3/labels --service tracker -X POST -f name=bug',
    "opsctl api /api/v3/search/stories --service tracker -f query=login --paginate --slurp --jq 'length'",
    'opsctl api /api/v3/stories --service tracker -X POST -f name=Hi -F estimate=3 -F "label_ids[]=7" -F description=@notes.md',
    'opsctl api /api/v3/labels --service tracker -i -H "Accept: application/json"',
  );
}

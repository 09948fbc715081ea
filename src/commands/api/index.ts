import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const collect = (value: string, prev: string[] = []) => [...prev, value];

export function register(program: Command, ctx: Context): void {
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
      .option('-f, --field <key=value>', 'a parameter: query string for GET/DELETE, JSON body field otherwise (repeatable)', collect)
      .option('--input <file>', 'send this file as the JSON body ("-" reads stdin)')
      .addOption(new Option('--service <service>', 'which service to call (its endpoint and credentials)').choices(['api', 'labels', 'tracker']).default('api'))
      .action(
        lazyAction(
          ctx,
          () => import('./call.js'),
          ([path]: [string], o) => ({
            path,
            method: String(o.method).toUpperCase() as 'GET',
            fields: (o.field as string[] | undefined) ?? [],
            input: o.input,
            service: o.service,
          }),
        ),
      ),
    'opsctl api /media/v3/channels -f part=snippet -f mine=true',
    'opsctl api /v2/labels --service labels -f view=LABEL_VIEW_FULL',
    'opsctl api /api/v3/labels --service tracker -X POST -f name=bug',
  );
}

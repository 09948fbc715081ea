import { adviceFor } from '@opsctl/shared/tracker/advice.js';
import { UsageError } from '../core/errors.js';

/**
 * Before a create or update is sent: a value the contract advises against (a project abbreviation over
 * 3 characters) is a warning on stderr, or with `strict` a usage error (exit 2) naming the field and the
 * fix, before anything is sent. `where` names the record in a file ("projects[2] (Backend)").
 */
export function checkAdvice(
  warn: (text: string) => void,
  resource: string,
  bodies: ReadonlyArray<{ body: unknown; where?: string }>,
  { strict }: { strict: boolean },
): void {
  const found = bodies.flatMap(({ body, where }) => adviceFor(resource, body).map((a) => ({ ...a, where })));
  if (found.length === 0) return;
  const line = (a: (typeof found)[number]) => `${a.where ? `${a.where}: ` : ''}${a.message}`;
  if (strict) {
    throw new UsageError(found.map(line).join('\n'), {
      code: 'advised_against',
      field: found[0]!.field,
      hint: `${found[0]!.hint}; or drop --strict to send it anyway; nothing was sent`,
    });
  }
  for (const a of found) warn(`${line(a)} (sent anyway; --strict refuses it)`);
}

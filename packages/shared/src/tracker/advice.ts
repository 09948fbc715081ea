/**
 * What the tracker's contract advises against without forbidding it: a value the service accepts but its
 * description says to avoid. The CLI warns before sending (and refuses with --strict); the mock takes it
 * as the service does, and refuses it only when started strict (`mock serve --tracker-strict`).
 */

/** The contract: "The Project abbreviation used in Story summaries. Should be kept to 3 characters at most." */
export const ABBREVIATION_ADVISED_MAX = 3;

export interface Advice {
  field: string;
  message: string;
  hint: string;
}

/** The advice for a create or update body of `resource` (none for most). */
export function adviceFor(resource: string, body: unknown): Advice[] {
  if (resource !== 'projects' || body === null || typeof body !== 'object' || Array.isArray(body)) return [];
  const abbreviation = (body as { abbreviation?: unknown }).abbreviation;
  if (typeof abbreviation !== 'string' || [...abbreviation].length <= ABBREVIATION_ADVISED_MAX) return [];
  return [
    {
      field: 'abbreviation',
      message: `abbreviation "${abbreviation}" is ${[...abbreviation].length} characters: the tracker's contract says a project abbreviation should be kept to ${ABBREVIATION_ADVISED_MAX} characters at most (it prefixes story summaries)`,
      hint: `use ${ABBREVIATION_ADVISED_MAX} characters or fewer, e.g. --abbreviation ${[...abbreviation].slice(0, ABBREVIATION_ADVISED_MAX).join('').toUpperCase()}`,
    },
  ];
}

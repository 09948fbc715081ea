import { existsSync } from 'node:fs';
import { readOwnFileSync } from '../../core/local-file.js';
import { z } from 'zod';
import { OpsError } from '../../core/errors.js';
import type { Journal } from './journal.js';

const Step = z.object({
  id: z.string().min(1),
  member: z.string().min(1).optional(),
  kind: z.enum(['snapshot', 'stop', 'wait-stopped', 'backup-data', 'start', 'wait-healthy', 'settle', 'wait-cluster-version', 'final-health']),
  status: z.enum(['pending', 'running', 'done', 'failed', 'skipped']),
  walBefore: z.union([z.object({ digest: z.string(), text: z.string() }), z.object({ why: z.string() })]).optional(),
});
const MemberPlan = z.object({
  name: z.string().min(1),
  id: z.string(),
  endpoint: z.string().min(1),
  fromVersion: z.string(),
  action: z.enum(['upgrade', 'restart', 'skip']),
  wasLeader: z.boolean(),
});
/**
 * The shape a journal must have before anything acts on it. Loose (passthrough) objects: fields a
 * newer opsctl adds are kept, since the reader returns the file's own object, never a stripped copy.
 */
const JournalSchema = z
  .looseObject({
    version: z.literal(1),
    id: z.string().min(1),
    cluster: z.string().min(1),
    source: z.string().min(1),
    target: z.string().min(1),
    allowSameVersion: z.boolean(),
    status: z.enum(['running', 'halted', 'interrupted', 'done', 'rolling-back', 'rolled-back']),
    members: z.array(MemberPlan),
    previous: z.record(z.string(), z.object({ version: z.string(), binDir: z.string().optional() })),
    steps: z.array(Step),
    snapshots: z.array(z.object({ member: z.string(), file: z.string(), revision: z.string(), bytes: z.number() })),
    rollbackSteps: z.array(Step).optional(),
  })
  .superRefine((j, ctx) => {
    const names = new Set(j.members.map((m) => m.name));
    stepsNameMembers(j.steps, names, "the journal's", ctx);
    (j.rollbackSteps ?? []).forEach((s, i) => {
      if (s.member === undefined || !names.has(s.member) || s.id !== `rollback/${s.member}/${s.kind}`)
        ctx.addIssue({
          code: 'custom',
          path: ['rollbackSteps', i],
          message: `roll-back step ${s.id} is not one kv rollback writes (rollback/MEMBER/KIND, a member of the journal's)`,
        });
    });
  });

/** A record's steps each name one of its members (or none): the issue of each that does not, at steps[i].member. */
export function stepsNameMembers(steps: ReadonlyArray<{ id: string; member?: string }>, names: ReadonlySet<string>, whose: string, ctx: z.RefinementCtx): void {
  steps.forEach((s, i) => {
    if (s.member !== undefined && !names.has(s.member))
      ctx.addIssue({ code: 'custom', path: ['steps', i, 'member'], message: `step ${s.id} names member "${s.member}", which is not one of ${whose} members` });
  });
}

/** A journal that cannot be trusted: named with its path and the fix; the file is left as it is. */
export class JournalInvalid extends OpsError {
  constructor(file: string, why: string, what = 'the kv upgrade journal') {
    super(`${what} ${file} cannot be used: ${why}`, 1, {
      code: 'journal_invalid',
      hint: `it was not changed. Check the cluster with opsctl kv status; if no upgrade is half-done, move the file aside (mv ${file} ${file}.bad) and run the command again`,
    });
  }
}

/** The journal at `file` (undefined when there is none), checked: truncated or wrong-shaped is a JournalInvalid. */
export function readJournal(file: string): Journal | undefined {
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readOwnFileSync(file, { what: 'the upgrade journal' }));
  } catch (err) {
    if (err instanceof OpsError) throw err;
    throw new JournalInvalid(file, err instanceof SyntaxError ? `not JSON (truncated?): ${err.message}` : (err as Error).message);
  }
  const r = JournalSchema.safeParse(raw);
  if (!r.success) {
    const [issue] = r.error.issues; // (a failed parse has at least one)
    throw new JournalInvalid(file, issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : r.error.message);
  }
  return raw as Journal;
}

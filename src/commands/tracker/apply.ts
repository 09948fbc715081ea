import { ExitCode } from '../../core/exit-codes.js';
import type { Context } from '../../context.js';
import { readFileFlag } from '../lib/file-flag.js';
import { confirmDestructive } from '../../core/confirm.js';
import { InterruptedError, OpsError, PartialError, UsageError } from '../../core/errors.js';
import { formatTable, type CommandResult } from '../../core/output.js';
import { dottedToItemPath, itemPath, plural } from '../../core/problems.js';
import { parseJsonOrYaml, TextProblem } from '../../core/apply-text.js';
import { desiredItems, planApply, PROBLEMS_SHOWN, writes, type Plan, type PlanStep } from '../../tracker/apply.js';
import { runWrites } from '../../tracker/apply-run.js';
import type { FieldSpec } from '../../tracker/fields.js';
import { columns, handleInterrupts, resource, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { applySpec } from './apply.spec.js';
import { changesExit } from '../action.js';
import { checkAdvice } from '../../tracker/advice.js';

export type ApplyOptions = OptionsOf<ReturnType<typeof applySpec>>;

/** `opsctl tracker labels apply -f FILE`: plan from 1 list, print, then exactly the writes the plan needs. */
export async function run(opts: ApplyOptions, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const key = spec.applyKey ?? 'name';
  const fields = spec.applyFields ?? [key];
  const createOnly = Object.entries(spec.fields)
    .filter(([, f]) => f.in?.length === 1 && f.in[0] === 'create')
    .map(([n]) => n);
  const allowed = [...fields, ...createOnly, 'renamed_from'];

  // the text and the parsed document are not kept past this line: only the items (memory: issue 27)
  const found = desiredItems(await parseText(await readFileFlag(opts.file, ctx, 'a YAML or JSON file'), opts.file), spec.name, key, allowed, spec.serverFields);
  if (found.ignored.length) ctx.io.info(`ignored what the server sets: ${found.ignored.join(', ')} (apply manages ${allowed.join(', ')})`);
  // null where the contract takes no null (`list --json` prints a missing description as null): not given
  for (const item of found.items) {
    if (!item || typeof item !== 'object') continue;
    for (const f of Object.keys(item)) if (item[f] === null && spec.fields[f] && !spec.fields[f].nullable) delete item[f];
  }
  // every record is checked against the contract before anything is sent; every problem is reported
  // (the key and unknown fields were reported by desiredItems already)
  const problems = [...found.problems];
  let more = found.more ?? 0;
  const { validateBody } = await import('../../tracker/validate.js');
  const merged: Record<string, FieldSpec> = {};
  for (const f of allowed) {
    const field = spec.fields[f];
    if (field) merged[f] = { ...field, in: undefined, required: false };
  }
  for (const [i, item] of found.items.entries()) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) continue;
    const { renamed_from: _renamedFrom, ...fieldsOnly } = item;
    for (const p of validateBody(merged, 'create', fieldsOnly))
      if (p.kind === 'unknown') continue;
      else if (problems.length < 2 * PROBLEMS_SHOWN) problems.push(`${itemPath(spec.name, i)}.${dottedToItemPath(p.field)}: ${p.message}`);
      else more++;
  }
  if (problems.length) {
    // in the file's order: every problem of labels[0], then of labels[1]…
    const at = (p: string) => Number(/^[\w-]+\[(\d+)\]/.exec(p)?.[1] ?? -1);
    problems.sort((a, b) => at(a) - at(b));
    // the first PROBLEMS_SHOWN, the rest counted: a file of a million bad entries is one short message
    const total = problems.length + more;
    const shown = problems.slice(0, PROBLEMS_SHOWN);
    if (total > shown.length) shown.push(`… and ${total - shown.length} more`);
    throw new UsageError(`${label(opts.file)}: ${plural(total, 'problem')}:\n  ${shown.join('\n  ')}`, {
      code: 'validation',
      field: 'file',
      hint: `fix them all, then run again; nothing was sent (see: opsctl tracker ${spec.name} apply --help)`,
    });
  }

  const client = await trackerClient(ctx, spec);
  const current = await client.list(spec);
  const plan = planApply(current, found.items, { key, fields, createOnly, prune: opts.prune });
  const todo = writes(plan);
  checkAdvice(
    (t) => ctx.io.warn(t),
    spec.name,
    todo.filter((s) => s.action === 'create' || s.action === 'update').map((s) => ({ body: s.body, where: `${spec.name} ${s.key}` })),
    { strict: Boolean(opts.strict) },
  );
  if (!ctx.jsonOutput) printPlan(ctx, plan, spec.name);
  const deletes = plan.steps.filter((s) => s.action === 'delete');
  if (deletes.length && !opts.dryRun) {
    // --prune deletes: the one confirmation rule (the plan above already listed them)
    const decision = await confirmDestructive(ctx, {
      action: `delete ${plural(deletes.length, spec.singular, spec.name)} not in ${label(opts.file)} (--prune)`,
      items: deletes.map((s) => `${spec.singular} ${s.id ?? ''} "${s.key}"`),
    });
    if (decision !== 'proceed') {
      return {
        data: { plan: plan.steps, counts: plan.counts, unlisted: plan.unlisted, dry_run: false, applied: 0, declined: true },
        text: '',
        message: 'nothing changed',
        exitCode: ExitCode.declined,
      };
    }
  }
  if (opts.dryRun || todo.length === 0) {
    return {
      data: { plan: plan.steps, counts: plan.counts, unlisted: plan.unlisted, dry_run: opts.dryRun, applied: 0 },
      text: '',
      message:
        todo.length === 0 ? `${spec.name} already match ${label(opts.file)}: nothing to do` : `dry run: ${plural(todo.length, 'write')} planned, none made`,
      ...changesExit(opts, todo.length),
    };
  }

  const progress = ctx.io.progress(`applying ${plural(todo.length, 'change')} to ${spec.name}`);
  // about ten progress lines however long the run (a live spinner shows every step)
  const every = ctx.io.liveProgress ? 1 : Math.max(1, Math.ceil(todo.length / 10));
  // Ctrl-C (or a CI timeout's SIGTERM) stops taking new writes and reports what was made
  const signal = await handleInterrupts(ctx);
  const outcome = await runWrites(client, spec, todo, {
    signal,
    // the counter counts finished writes, failures named: never "applied 4/4" when 2 of them failed
    onStep: (n, total, failed) => (n % every === 0 || n === total) && progress.update(`${n}/${total} done${failed ? `, ${failed} failed` : ''}`),
  });
  if (outcome.interrupted) {
    progress.fail(`interrupted after ${outcome.applied.length} of ${plural(todo.length, 'change')}`);
    const { inFlight, notStarted } = outcome.interrupted;
    throw new InterruptedError(
      `apply ${label(opts.file)} interrupted: ${outcome.applied.length} of ${plural(todo.length, 'change')} applied, ${outcome.failed.length} failed, ` +
        `${inFlight} in flight (may or may not have been made), ${notStarted} not started; run the same apply again to finish`,
    );
  }
  const summary = {
    planned: todo.length,
    applied: outcome.applied.length,
    failed: outcome.failed.map((f) => ({ action: f.step.action, [key]: f.step.key, status: f.status, error: f.message })),
    skipped: outcome.skipped.map((s) => ({ action: s.action, [key]: s.key })),
  };
  if (outcome.failed.length === 0 && outcome.skipped.length === 0) {
    progress.succeed(`applied ${plural(todo.length, 'change')} to ${spec.name}`);
    return {
      data: { plan: plan.steps, counts: plan.counts, unlisted: plan.unlisted, dry_run: false, applied: todo.length },
      text: '',
      ...changesExit(opts, todo.length),
    };
  }
  progress.fail(`${outcome.failed.length} of ${plural(todo.length, 'change')} failed`);
  const lines = outcome.failed.map((f) => `  ${f.step.action} ${f.step.key}: ${f.message}`).join('\n');
  const message = `apply ${label(opts.file)}: ${outcome.applied.length} of ${plural(todo.length, 'change')} applied, ${outcome.failed.length} failed${outcome.skipped.length ? `, ${outcome.skipped.length} skipped` : ''}:\n${lines}`;
  const hint = 'fix the failed records (or wait and retry); running the same apply again makes only the remaining changes';
  if (outcome.applied.length === 0) throw new OpsError(message, 1, { code: 'apply_failed', hint });
  throw new PartialError(message, { hint, summary });
}

/** Plan rows formatted and written this many at a time: a plan of 131,000 creates is never one string (memory: issue 27). */
const PLAN_ROWS_PER_WRITE = 2000;

function printPlan(ctx: Context, plan: Plan, what: string): void {
  const shown = plan.steps.filter((s) => s.action !== 'unchanged' || plan.steps.length <= 50);
  const row = (s: PlanStep) => ({
    action: s.action,
    name: s.key,
    id: s.id ?? '',
    changes: [
      ...(s.renamedFrom !== undefined ? [`renamed from ${JSON.stringify(s.renamedFrom)}:`] : []),
      ...s.changes.map((c) => `${c}=${JSON.stringify(s.body?.[c] ?? null)}`),
    ].join(' '),
  });
  // on a terminal a longer plan repeats its header every PLAN_ROWS_PER_WRITE rows; piped, the lines are the same
  for (let i = 0; i < shown.length; i += PLAN_ROWS_PER_WRITE)
    ctx.io.out(formatTable(ctx.io, shown.slice(i, i + PLAN_ROWS_PER_WRITE).map(row), columns(['action', 'name', 'id', 'changes'])));
  const c = plan.counts;
  ctx.io.err(
    `plan for ${what}: ${c.create} to create, ${c.update} to update, ${c.archive} to archive, ${c.delete} to delete, ${c.unchanged} unchanged` +
      (plan.unlisted.length ? `; ${plan.unlisted.length} not in the file left alone (--prune deletes them)` : ''),
  );
}

/** JSON when it looks like JSON, else YAML (a superset of JSON anyway) up to 128 KiB (core/apply-text.ts). */
async function parseText(text: string, file: string): Promise<unknown> {
  // in YAML an unquoted #rrggbb starts a comment: the colour would silently become null (cleared)
  const bare: string[] = [];
  let count = 0;
  let line = 1;
  let from = 0;
  for (const m of text.matchAll(/^[ \t]*(?:-[ \t]+)?color:[ \t]*#.*$/gm)) {
    // line numbers counted as the matches go (a slice per match was quadratic in a large file)
    for (let nl = text.indexOf('\n', from); nl !== -1 && nl < m.index; nl = text.indexOf('\n', nl + 1)) line++;
    from = m.index;
    if (++count > 20) continue;
    const shown = /^[ \t]*(?:-[ \t]+)?color:[ \t]*#[0-9a-fA-F]{3,8}[ \t]*$/.test(m[0]) ? ` "${m[0].trim()}"` : '';
    bare.push(`${label(file)}:${line}: unquoted colour${shown} is a YAML comment, not a value`);
  }
  if (count > 20) bare.push(`… and ${count - 20} more`);
  if (bare.length) throw new UsageError(bare.join('\n'), { field: 'file', hint: 'quote it: color: "#d73a4a"' });
  try {
    return await parseJsonOrYaml(text);
  } catch (err) {
    if (!(err instanceof TextProblem)) throw err;
    throw new UsageError(`${label(file)}: ${err.message}`, { field: 'file', hint: err.hint ?? 'fix the file at that line and column; nothing was sent' });
  }
}

const label = (file: string) => (file === '-' ? 'stdin' : file);

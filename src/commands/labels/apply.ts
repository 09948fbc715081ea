import { ExitCode } from '../../core/exit-codes.js';
import type { Context } from '../../context.js';
import { readFileFlag } from '../file-flag.js';
import { ApiError, PartialError, ValidationError } from '../../core/errors.js';
import { confirmDestructive } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import type { LabelsClient } from '../../labels/client.js';
import { parseLabelFile, type DesiredLabel } from '../../labels/file.js';
import { statusLine } from '../../labels/format.js';
import { PlanError, limitProblems, planLabel, planWrites, type Plan } from '../../labels/plan.js';
import type { Label, LabelPermission } from '../../labels/types.js';
import { principalKey } from '../../labels/names.js';
import { labelsClient } from './shared.js';

export interface ApplyOptions {
  file: string;
  dryRun: boolean;
  publish: boolean;
  /** Send useAdminAccess (also on when the file or the label says ADMIN). */
  admin?: boolean;
}

/** The label the file describes: by `id`, else the one label you can edit with the same title, else none (create). */
async function findCurrent(client: LabelsClient, desired: DesiredLabel, source: string): Promise<Label | undefined> {
  if (desired.id) {
    try {
      return await client.get(`labels/${desired.id}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        throw new ValidationError(`${source}: id`, `label ${desired.id} does not exist (or you cannot see it)`, 'remove `id` to create the label, or fix the id');
      }
      throw err;
    }
  }
  const same = (await client.list({ minimumRole: 'EDITOR' })).filter((l) => l.properties?.title === desired.title);
  if (same.length > 1) {
    throw new ValidationError(
      `${source}: title`,
      `${same.length} labels you edit are titled "${desired.title}" (${same.map((l) => l.id).join(', ')})`,
      'add `id: <label id>` to the file to say which one',
    );
  }
  return same[0];
}

function planText(current: Label | undefined, desired: DesiredLabel, plan: Plan, publish: boolean): string {
  const head = current
    ? `label "${current.properties?.title}" (labels/${current.id}, revision ${current.revisionId}, ${current.lifecycle?.state}${current.lifecycle?.hasUnpublishedChanges ? ', unpublished changes wait' : ''})`
    : `label "${desired.title}" (new)`;
  const lines = [head, ...plan.changes.map((c) => `  ${c}`)];
  if (publish) lines.push('  ^ publish');
  const writes = planWrites(plan) + (publish ? 1 : 0);
  if (writes === 0) lines.push('up to date: nothing to send');
  else {
    const parts = [
      plan.create ? '1 create' : '',
      plan.requests.length ? `1 :delta with ${plan.requests.length} update${plan.requests.length === 1 ? '' : 's'}${current ? ` (requiredRevisionId ${current.revisionId})` : ''}` : '',
      plan.grant.length ? `1 permissions:batchUpdate (${plan.grant.length})` : '',
      plan.revoke.length ? `1 permissions:batchDelete (${plan.revoke.length})` : '',
      publish ? '1 :publish' : '',
    ].filter(Boolean);
    lines.push(`${writes} write${writes === 1 ? '' : 's'}: ${parts.join(', ')}`);
  }
  return lines.join('\n');
}

/**
 * `labels apply -f FILE`: reads the limits and the label, plans the fewest writes (one create or one
 * :delta guarded by requiredRevisionId, one permissions batch each way, an optional publish), prints
 * the plan, refuses a file that breaks limits/label before sending anything, then sends it.
 */
export async function run(opts: ApplyOptions, ctx: Context): Promise<CommandResult> {
  const source = opts.file === '-' ? 'stdin' : opts.file;
  const desired = await parseLabelFile(await readFileFlag(opts.file, ctx, 'a YAML or JSON label file'), source);
  const client = await labelsClient(ctx);
  // admin labels are read and changed with useAdminAccess (and an admin scope)
  client.admin = Boolean(opts.admin) || desired.labelType === 'ADMIN';
  const [limits, current] = await Promise.all([client.limits(), findCurrent(client, desired, source)]);
  // an ADMIN label found by id is changed with admin access too (the file need not repeat its type)
  if (current?.labelType === 'ADMIN') client.admin = true;
  const problems = limitProblems(desired, current, limits);
  if (problems.length) {
    throw new ValidationError(source, `breaks limits/label:\n  ${problems.join('\n  ')}`, 'shorten the file (see: opsctl labels limits); nothing was sent');
  }
  const permissions: LabelPermission[] | undefined = current && desired.permissions ? await client.permissions(`labels/${current.id}`) : undefined;
  let plan: Plan;
  try {
    plan = planLabel(current, desired, permissions);
  } catch (err) {
    if (err instanceof PlanError) throw new ValidationError(source, err.message, 'nothing was sent');
    throw err;
  }
  const publish = opts.publish && Boolean(plan.create || plan.requests.length || current?.lifecycle?.hasUnpublishedChanges);
  if (publish && current?.lifecycle?.state === 'DISABLED') {
    throw new ValidationError('--publish', `labels/${current.id} is disabled: a disabled label cannot be published`, `enable it first (opsctl labels enable ${current.id}), or apply without --publish; nothing was sent`);
  }
  const text = planText(current, desired, plan, publish);
  const summary = { label: current ? `labels/${current.id}` : undefined, create: plan.create, requests: plan.requests, grant: plan.grant, revoke: plan.revoke.map((p) => p.name), publish, writes: planWrites(plan) + (publish ? 1 : 0) };

  if (opts.dryRun) return { data: { ...summary, applied: false }, text, message: 'dry run: nothing sent' };
  if (!ctx.jsonOutput) ctx.io.out(text);
  if (summary.writes === 0) return { data: { ...summary, applied: true, revisionId: current?.revisionId }, text: '' };
  const removals = [
    ...plan.revoke.map((p) => `permission ${principalKey(p)} (${p.role})`),
    ...plan.requests.flatMap((r) => (r.deleteField ? [`field ${r.deleteField.id}`] : r.deleteSelectionChoice ? [`choice ${r.deleteSelectionChoice.id} of field ${r.deleteSelectionChoice.fieldId}`] : [])),
  ];
  if (removals.length) {
    // what the file drops is deleted: the one confirmation rule (the plan above listed it)
    const decision = await confirmDestructive(ctx, { action: `remove ${removals.length} thing${removals.length === 1 ? '' : 's'} ${source} no longer lists`, items: removals });
    if (decision !== 'proceed') return { data: { ...summary, applied: false, declined: true }, text: '', message: 'nothing changed', exitCode: ExitCode.declined };
  }

  const done: string[] = [];
  let label = current;
  try {
    if (plan.create) {
      label = await client.create(plan.create);
      done.push(`created labels/${label.id}`);
    } else if (plan.requests.length) {
      const res = await client.delta(`labels/${label!.id}`, plan.requests, label!.revisionId);
      label = res.updatedLabel ?? (await client.get(`labels/${label!.id}`));
      done.push(`:delta → revision ${label.revisionId}`);
    }
    const parent = `labels/${label!.id}`;
    if (plan.grant.length) {
      await client.batchUpdatePermissions(parent, plan.grant);
      done.push(`granted ${plan.grant.length}`);
    }
    if (plan.revoke.length) {
      await client.batchDeletePermissions(parent, plan.revoke.map((p) => p.name!));
      done.push(`removed ${plan.revoke.length} permission(s)`);
    }
    if (publish) {
      label = await client.lifecycle(parent, 'publish', { writeControl: { requiredRevisionId: label!.revisionId } });
      done.push(`published revision ${label.revisionId}`);
    }
  } catch (err) {
    if (done.length === 0) throw err;
    throw new PartialError(`labels apply stopped after: ${done.join('; ')}. Then: ${(err as Error).message}`, {
      hint: `fix the cause and run the same apply again: it plans only what is still missing`,
      summary: { done },
      cause: err,
    });
  }
  return {
    data: { ...summary, label: `labels/${label!.id}`, applied: true, revisionId: label!.revisionId, state: label!.lifecycle?.state },
    text: '',
    message: `applied ${source}: ${statusLine(label!)}`,
  };
}

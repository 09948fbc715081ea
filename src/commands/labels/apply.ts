import { ExitCode } from '../../core/exit-codes.js';
import type { Context } from '../../context.js';
import { readFileFlag } from '../lib/file-flag.js';
import { ApiError, PartialError, ValidationError } from '../../core/errors.js';
import { confirmDestructive } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import type { LabelsClient } from '../../labels/client.js';
import { parseLabelsFile, type DesiredLabel } from '../../labels/file.js';
import { statusLine } from '../../labels/format.js';
import { PlanError, limitProblems, planLabel, planWrites, type Plan } from '../../labels/plan.js';
import type { Label, LabelLimits, LabelPermission } from '../../labels/types.js';
import { principalKey } from '../../labels/names.js';
import { labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './apply.spec.js';
import { changesExit } from '../action.js';

export type Options = OptionsOf<typeof spec>;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The labels you can edit, read once per apply (only when some label of the file has no id). */
type Editable = () => Promise<Label[]>;

/**
 * The label an entry describes: by `id` (an id copied from the service's output that this service does
 * not have falls back to the title), else the one label you can edit with its title (or an old title
 * from `renamed_from`), else none (create).
 */
async function findCurrent(client: LabelsClient, desired: DesiredLabel, at: string, editable: Editable): Promise<Label | undefined> {
  if (desired.id) {
    try {
      return await client.get(`labels/${desired.id}`);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      if (!desired.idFromService) {
        throw new ValidationError(`${at}id`, `label ${desired.id} does not exist (or you cannot see it)`, 'remove `id` to create the label, or fix the id');
      }
    }
  }
  const labels = await editable();
  for (const title of [desired.title, ...(desired.renamedFrom ?? [])]) {
    const same = labels.filter((l) => l.properties?.title === title);
    if (same.length > 1) {
      throw new ValidationError(
        `${at}title`,
        `${same.length} labels you edit are titled "${title}" (${same.map((l) => l.id).join(', ')})`,
        'add `id: <label id>` to the file to say which one',
      );
    }
    if (same.length) return same[0];
  }
  return undefined;
}

interface LabelPlan {
  desired: DesiredLabel;
  current?: Label;
  plan: Plan;
  publish: boolean;
  writes: number;
}

function planText(p: LabelPlan): string {
  const { current, desired, plan, publish } = p;
  const head = current
    ? `label "${current.properties?.title}" (labels/${current.id}, revision ${current.revisionId}, ${current.lifecycle?.state}${current.lifecycle?.hasUnpublishedChanges ? ', unpublished changes wait' : ''})`
    : `label "${desired.title}" (new)`;
  const lines = [head, ...plan.changes.map((c) => `  ${c}`)];
  if (publish) lines.push('  ^ publish');
  if (p.writes === 0) lines.push('up to date: nothing to send');
  else {
    const parts = [
      plan.create ? '1 create' : '',
      plan.requests.length ? `1 :delta with ${plural(plan.requests.length, 'update')}${current ? ` (requiredRevisionId ${current.revisionId})` : ''}` : '',
      plan.copyMode ? '1 :updateLabelCopyMode' : '',
      plan.enabledApps ? '1 :updateLabelEnabledAppSettings' : '',
      plan.grant.length ? `1 permissions:batchUpdate (${plan.grant.length})` : '',
      plan.revoke.length ? `1 permissions:batchDelete (${plan.revoke.length})` : '',
      plan.enable ? '1 :enable' : '',
      publish ? '1 :publish' : '',
      plan.disable ? '1 :disable' : '',
    ].filter(Boolean);
    lines.push(`${plural(p.writes, 'write')}: ${parts.join(', ')}`);
  }
  return lines.join('\n');
}

/** What every label of a file is planned against: the file's name, the service's limits, the labels you edit, and --publish. */
interface FilePlanning {
  source: string;
  limits: LabelLimits;
  editable: Editable;
  publish: Options['publish'];
}

/** Plans one label of the file (`at`: its place in it); every refusal names the file and that place. */
async function planOne(
  client: LabelsClient,
  desired: DesiredLabel,
  at: string,
  { source, limits, editable, publish: publishing }: FilePlanning,
): Promise<LabelPlan> {
  const current = await findCurrent(client, desired, `${source}: ${at}`, editable);
  const problems = limitProblems(desired, current, limits);
  if (problems.length) {
    throw new ValidationError(
      source,
      `breaks limits/label:\n  ${problems.map((p) => `${at}${p}`).join('\n  ')}`,
      'shorten the file (see: opsctl labels limits); nothing was sent',
    );
  }
  const permissions: LabelPermission[] | undefined = current && desired.permissions ? await client.permissions(`labels/${current.id}`) : undefined;
  let plan: Plan;
  try {
    plan = planLabel(current, desired, permissions, { publish: publishing });
  } catch (err) {
    if (err instanceof PlanError) throw new ValidationError(source, `${at}${err.message}`, 'nothing was sent');
    throw err;
  }
  const publish = publishing && Boolean(plan.create || plan.requests.length || current?.lifecycle?.hasUnpublishedChanges);
  if (publish && current?.lifecycle?.state === 'DISABLED' && !plan.enable) {
    throw new ValidationError(
      '--publish',
      `labels/${current.id} is disabled: a disabled label cannot be published`,
      `enable it first (opsctl labels enable ${current.id}, or disabled: false in the file), or apply without --publish; nothing was sent`,
    );
  }
  return { desired, current, plan, publish, writes: planWrites(plan) + (publish ? 1 : 0) };
}

function summaryOf(p: LabelPlan): Record<string, unknown> {
  const { plan } = p;
  return {
    label: p.current ? `labels/${p.current.id}` : undefined,
    create: plan.create,
    requests: plan.requests,
    ...(plan.copyMode ? { copyMode: plan.copyMode } : {}),
    ...(plan.enabledApps ? { enabledApps: plan.enabledApps } : {}),
    grant: plan.grant,
    revoke: plan.revoke.map((x) => x.name),
    ...(plan.enable ? { enable: true } : {}),
    publish: p.publish,
    ...(plan.disable ? { disable: plan.disable } : {}),
    writes: p.writes,
  };
}

function removalsOf(p: LabelPlan, { many }: { many: boolean }): string[] {
  const of = many ? ` of label "${p.desired.title}"` : '';
  return [
    ...p.plan.revoke.map((x) => `permission ${principalKey(x)} (${x.role})${of}`),
    ...p.plan.requests.flatMap((r) =>
      r.deleteField
        ? [`field ${String(r.deleteField.id)}${of}`]
        : r.deleteSelectionChoice
          ? [`choice ${String(r.deleteSelectionChoice.id)} of field ${String(r.deleteSelectionChoice.fieldId)}${of}`]
          : [],
    ),
  ];
}

/** Sends one label's plan in order: create or :delta, copy mode, apps, permissions, enable, publish, disable. */
async function send(client: LabelsClient, p: LabelPlan, done: string[]): Promise<Label> {
  const { plan } = p;
  let label = p.current;
  const name = () => `labels/${label!.id}`;
  if (plan.create) {
    label = await client.create(plan.create);
    done.push(`created labels/${label.id}`);
  } else if (plan.requests.length) {
    const res = await client.delta(name(), plan.requests, label!.revisionId);
    label = res.updatedLabel ?? (await client.get(name()));
    done.push(`${name()}: :delta → revision ${label.revisionId}`);
  }
  if (plan.copyMode && label!.appliedLabelPolicy?.copyMode !== plan.copyMode) {
    label = await client.copyMode(name(), plan.copyMode);
    done.push(`${name()}: copy mode ${plan.copyMode}`);
  }
  if (plan.enabledApps) {
    label = await client.enabledApps(name(), plan.enabledApps);
    done.push(`${name()}: apps ${plan.enabledApps.join(', ') || 'none'}`);
  }
  if (plan.grant.length) {
    await client.batchUpdatePermissions(name(), plan.grant);
    done.push(`${name()}: granted ${plural(plan.grant.length, 'permission')}`);
  }
  if (plan.revoke.length) {
    await client.batchDeletePermissions(
      name(),
      plan.revoke.map((x) => x.name!),
    );
    done.push(`${name()}: removed ${plural(plan.revoke.length, 'permission')}`);
  }
  if (plan.enable) {
    label = await client.lifecycle(name(), 'enable', { writeControl: { requiredRevisionId: label!.revisionId } });
    done.push(`${name()}: enabled`);
  }
  if (p.publish) {
    label = await client.lifecycle(name(), 'publish', { writeControl: { requiredRevisionId: label!.revisionId } });
    done.push(`${name()}: published revision ${label.revisionId}`);
  }
  if (plan.disable) {
    label = await client.lifecycle(name(), 'disable', { writeControl: { requiredRevisionId: label!.revisionId }, disabledPolicy: plan.disable });
    done.push(`${name()}: disabled`);
  }
  return label!;
}

/**
 * `labels apply -f FILE`: reads the limits and the labels, plans the fewest writes per label (one create
 * or one :delta guarded by requiredRevisionId, one permissions batch each way, one call per setting that
 * changes, an optional publish), prints the plan, refuses a file that breaks limits/label before sending
 * anything, then sends it. A file may hold one label or a list; `labels get/list --json` output is taken as it is.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const source = opts.file === '-' ? 'stdin' : opts.file;
  const file = await parseLabelsFile(await readFileFlag(opts.file, ctx, 'a YAML or JSON label file'), source);
  if (file.ignored.length) ctx.io.info(`${source}: ignored what the service owns: ${file.ignored.join(', ')}`);
  const client = await labelsClient(ctx);
  // admin labels are read and changed with useAdminAccess (and an admin scope)
  client.admin = Boolean(opts.admin) || file.labels.some((l) => l.labelType === 'ADMIN');
  client.languageCode = file.labels.find((l) => l.languageCode)?.languageCode;
  let editableList: Promise<Label[]> | undefined;
  const editable: Editable = () => (editableList ??= client.list({ minimumRole: 'EDITOR' }));
  // the limits and the labels you edit are read together (one list for the whole file)
  const [limits] = await Promise.all([client.limits(), file.labels.some((l) => !l.id) ? editable() : undefined]);
  const plans: LabelPlan[] = [];
  const planning: FilePlanning = { source, limits, editable, publish: opts.publish };
  for (const [i, desired] of file.labels.entries()) {
    plans.push(await planOne(client, desired, file.list ? `[${i}].` : '', planning));
  }
  // an ADMIN label found by id is changed with admin access too (the file need not repeat its type)
  if (plans.some((p) => p.current?.labelType === 'ADMIN')) client.admin = true;
  const text = plans.map(planText).join('\n');
  const writes = plans.reduce((n, p) => n + p.writes, 0);
  const summaries = plans.map(summaryOf);
  const summary = file.list ? { labels: summaries, writes } : summaries[0];

  if (opts.dryRun) return { data: { ...summary, applied: false }, text, message: 'dry run: nothing sent', ...changesExit(opts, writes) };
  if (!ctx.jsonOutput) ctx.io.out(text);
  if (writes === 0) return { data: { ...summary, applied: true, ...(file.list ? {} : { revisionId: plans[0]?.current?.revisionId }) }, text: '' };
  const removals = plans.flatMap((p) => removalsOf(p, { many: file.list }));
  if (removals.length) {
    // what the file drops is deleted: the one confirmation rule (the plan above listed it)
    const decision = await confirmDestructive(ctx, { action: `remove ${plural(removals.length, 'thing')} ${source} no longer lists`, items: removals });
    if (decision !== 'proceed')
      return { data: { ...summary, applied: false, declined: true }, text: '', message: 'nothing changed', exitCode: ExitCode.declined };
  }

  const done: string[] = [];
  const results: Label[] = [];
  try {
    for (const p of plans) results.push(p.writes ? await send(client, p, done) : p.current!);
  } catch (err) {
    if (done.length === 0) throw err;
    throw new PartialError(`labels apply stopped after: ${done.join('; ')}. Then: ${(err as Error).message}`, {
      hint: `fix the cause and run the same apply again: it plans only what is still missing`,
      summary: { done },
      cause: err,
    });
  }
  const after = (l: Label) => ({ label: `labels/${l.id}`, applied: true, revisionId: l.revisionId, state: l.lifecycle?.state });
  if (!file.list) {
    // a file of one label: one plan, one result
    const [label] = results;
    if (!label) throw new Error('labels apply: no result for the one label of the file');
    return { data: { ...summary, ...after(label) }, text: '', message: `applied ${source}: ${statusLine(label)}`, ...changesExit(opts, writes) };
  }
  return {
    data: { labels: results.map((l, i) => ({ ...summaries[i], ...after(l) })), writes, applied: true },
    text: '',
    message: `applied ${source}: ${plural(plans.filter((p) => p.writes).length, 'label')} changed, ${plural(plans.filter((p) => !p.writes).length, 'label')} up to date`,
    ...changesExit(opts, writes),
  };
}

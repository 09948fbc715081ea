import { syntaxErrorText } from '../../core/syntax-error.js';
import { extname } from 'node:path';
import type { Context } from '../../context.js';
import { readFileFlag } from '../lib/file-flag.js';
import { ApiError, InterruptedError, OpsError, PartialError, UsageError } from '../../core/errors.js';
import { plural } from '../../core/problems.js';
import { formatTable, type CommandResult } from '../../core/output.js';
import { assertValid } from '../../tracker/input.js';
import { stories } from '@opsctl/shared/tracker/resources/stories.js';
import { workflows } from '@opsctl/shared/tracker/resources/workflows.js';
import { chunks, csvRecords, importItems, planImport } from '../../tracker/story-import.js';
import { resolveState, type WorkflowRef } from '../../tracker/workflow-states.js';
import { columns, handleInterrupts, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { importSpec } from './import.spec.js';
import { changesExit } from '../action.js';
import { parseYaml, YamlTextError } from '../../core/yaml.js';

export type ImportOptions = OptionsOf<ReturnType<typeof importSpec>>;

const label = (file: string) => (file === '-' ? 'stdin' : file);

/**
 * `opsctl tracker stories import -f FILE`: every story checked first (exit 2 naming the row), then one
 * search for the stories that exist (matched by external_id), a plan, and bulk creates of up to 100
 * stories, paced by the HTTP layer. A second run finds every story and writes nothing.
 */
export async function run(opts: ImportOptions, ctx: Context): Promise<CommandResult> {
  const format = (opts.format ?? (extname(opts.file).slice(1) || 'yaml')).toLowerCase().replace('yml', 'yaml');
  if (!['yaml', 'json', 'csv'].includes(format))
    throw new UsageError(`--format: "${format}" is not yaml, json or csv`, { field: 'format', hint: 'name the file .yaml, .json or .csv, or pass --format' });
  const text = await readFileFlag(opts.file, ctx, 'a YAML, JSON or CSV file');
  const data = await parse(text, format, opts.file);
  // 0-based like apply (`labels[0]`); a CSV row also gives its line (the header is line 1)
  const rowLabel = (i: number) => (format === 'csv' ? `stories[${i}] (line ${i + 2})` : `stories[${i}]`);
  const found = importItems(data, rowLabel);
  if ('problem' in found) throw new UsageError(`${label(opts.file)}: ${found.problem}`, { field: 'file', hint: 'see: opsctl tracker stories import --help' });
  for (const item of found.items) {
    try {
      await assertValid(stories.fields, 'create', item.body, 'story');
    } catch (err) {
      // `--story-type: must be …` names the field as the file does: `stories[0].story_type: must be …`
      const message = (err as Error).message.replace(/^--([\w-]+): /, (_m, f: string) => `.${f.replace(/-/g, '_')}: `);
      throw new UsageError(`${label(opts.file)}: ${item.where}${message.startsWith('.') ? '' : ': '}${message}`, {
        field: 'file',
        hint: (err as OpsError).hint,
      });
    }
  }

  const client = await trackerClient(ctx, stories);
  if (found.items.some((i) => i.state)) {
    const all = await client.list<WorkflowRef>(workflows);
    for (const item of found.items) {
      if (!item.state) continue;
      try {
        item.body.workflow_state_id = resolveState(all, undefined, item.state).id;
      } catch (err) {
        throw new UsageError(`${label(opts.file)}: ${item.where}: ${(err as Error).message.replace(/^--state/, 'state')}`, {
          field: 'file',
          hint: (err as OpsError).hint,
        });
      }
    }
  }
  // the stories that exist, active and archived (an archived story with the same external_id counts too)
  const current = [
    ...(await client.http.post<Array<{ id: number; external_id?: string | null }>>('/api/v3/stories/search', { archived: false })),
    ...(await client.http.post<Array<{ id: number; external_id?: string | null }>>('/api/v3/stories/search', { archived: true })),
  ];
  const plan = planImport(found.items, current);
  // the plan is for the person at the terminal; piped, stdout carries only the created stories (id, external_id, name)
  if (!ctx.jsonOutput && ctx.io.isStdoutTTY && plan.create.length + plan.existing.length <= 50) {
    const rows = [
      ...plan.create.map((i) => ({ action: 'create', external_id: i.body.external_id, name: i.body.name, id: '' })),
      ...plan.existing.map((e) => ({ action: 'exists', external_id: e.item.body.external_id, name: e.item.body.name, id: e.id })),
    ];
    ctx.io.out(formatTable(ctx.io, rows, columns(['action', 'external_id', 'name', 'id'])));
  }
  const batches = chunks(plan.create);
  ctx.io.err(
    `plan: ${plan.create.length} to create in ${batches.length} bulk request(s), ${plan.existing.length} already exist (matched by external_id, left alone)`,
  );
  const summary = (created: number[]) => ({
    planned: plan.create.length,
    existing: plan.existing.length,
    created: created.length,
    ids: created,
    dry_run: opts.dryRun,
    requests: batches.length,
  });
  if (opts.dryRun || batches.length === 0) {
    return {
      data: summary([]),
      text: '',
      message:
        batches.length === 0
          ? `every story of ${label(opts.file)} exists: nothing to do`
          : `dry run: ${plural(plan.create.length, 'story', 'stories')} planned, none created`,
      ...changesExit(opts, plan.create.length),
    };
  }

  const signal = await handleInterrupts(ctx);
  const progress = ctx.io.progress(`creating ${plural(plan.create.length, 'story', 'stories')}`);
  const created: number[] = [];
  const rows: Array<{ id: number; external_id: unknown; name: unknown }> = [];
  // The counts say what the service holds: a bulk create in flight when Ctrl-C comes is waited for
  // (its answer counted); one whose answer is lost is "at least N, up to M", never N alone.
  const rerun = 'run the same import again: it matches the stories that exist by external_id and creates only the missing ones';
  const unsure = (sent: number) =>
    `at least ${created.length}, up to ${created.length + sent} of ${plan.create.length} created (the last bulk request of ${sent} was sent and its answer lost)`;
  let inFlight = 0;
  // a second Ctrl-C quits at once: its last words say what may be on the service
  ctx.lastWords = () => (inFlight ? `stories import ${label(opts.file)} quit: ${unsure(inFlight)}; ${rerun}` : undefined);
  let lost: { sent: number; why: string } | undefined;
  for (const [n, batch] of batches.entries()) {
    if (signal.aborted) break;
    const sentBefore = client.http.sent;
    try {
      inFlight = batch.length;
      const made = await client.http
        .request<Array<{ id: number; external_id?: unknown; name?: unknown }>>({
          method: 'POST',
          path: '/api/v3/stories/bulk',
          json: { stories: batch.map((i) => i.body) },
          untilAnswered: true,
        })
        .then((r) => r.data);
      inFlight = 0;
      created.push(...made.map((s) => s.id));
      rows.push(...made.map((s) => ({ id: s.id, external_id: s.external_id ?? null, name: s.name ?? null })));
      progress.update(`created ${created.length}/${plan.create.length}`);
    } catch (err) {
      inFlight = 0;
      // sent, and no answer from the service (a network error, a deadline): it may have made them
      const answered = err instanceof ApiError || err instanceof InterruptedError || client.http.sent === sentBefore;
      if (signal.aborted) {
        if (!answered) lost = { sent: batch.length, why: (err as Error).message };
        break;
      }
      progress.fail(`batch ${n + 1} of ${batches.length} failed`);
      const why = err instanceof ApiError ? err.message : (err as Error).message;
      // chunks() makes no empty batch: its first and last stories name it
      const counted = answered ? `${created.length} of ${plan.create.length} created` : unsure(batch.length);
      const message = `stories import ${label(opts.file)}: ${counted}; batch ${n + 1} (${batch[0]?.where} … ${batch.at(-1)?.where}) failed: ${why}`;
      const hint = answered ? `fix what the server named and ${rerun}` : rerun;
      if (created.length === 0) throw new OpsError(message, 1, { code: 'import_failed', hint, cause: err });
      throw new PartialError(message, { hint, summary: summary(created) });
    }
  }
  ctx.lastWords = undefined;
  if (signal.aborted) {
    const left = plan.create.length - created.length - (lost?.sent ?? 0);
    progress.fail(`interrupted after ${created.length} of ${plan.create.length}`);
    throw new InterruptedError(
      `stories import ${label(opts.file)} interrupted: ` +
        (lost
          ? `${unsure(lost.sent)}: ${lost.why}; ${left} not sent`
          : `${created.length} of ${plan.create.length} created (every bulk request sent was answered), ${left} not sent`) +
        `; ${rerun}`,
    );
  }
  progress.succeed(`created ${plural(created.length, 'story', 'stories')} in ${plural(batches.length, 'bulk request')}`);
  // the ids made, as gh prints what it created: a table on a terminal, TSV (id, external_id, name) piped
  return { data: summary(created), text: formatTable(ctx.io, rows, columns(['id', 'external_id', 'name'])), ...changesExit(opts, created.length) };
}

async function parse(text: string, format: string, file: string): Promise<unknown> {
  try {
    if (format === 'csv') {
      const { parse: parseCsv } = await import('csv-parse/sync');
      return csvRecords(parseCsv<Record<string, string>>(text, { columns: true, skip_empty_lines: true, trim: false, bom: true }));
    }
    if (format === 'json') return JSON.parse(text);
    return await parseYaml(text);
  } catch (err) {
    // (a YAML file over the YAML reader's cap is read as JSON, up to the 16 MiB of every file)
    const tooBig = err instanceof YamlTextError && err.code === 'YAML_TOO_BIG';
    throw new UsageError(`${label(file)}: not valid ${format.toUpperCase()}: ${syntaxErrorText(err, format === 'json' ? text : undefined)}`, {
      field: 'file',
      ...(tooBig ? { hint: 'write the stories as JSON (--format json), or split them into smaller files; nothing was sent' } : {}),
    });
  }
}

import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { CONFIRM_HELP, examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { COPY_MODES, FIELD_TYPES, LABEL_TYPES, ROLES } from '../../labels/schema.js';

const ROLE_CHOICES = [...ROLES];
/** `ALWAYS_COPY` → `always-copy`, as the CLI spells enum values. */
const kebab = (v: string) => v.toLowerCase().replace(/_/g, '-');
const LABEL_ARG = '<label>';
const ADMIN_HELP = 'use admin access (useAdminAccess; needs the drive.admin.labels scope): the way to read or change an ADMIN label';
/** `--admin` on a verb that acts on one label. */
const admin = (c: Command): Command => c.option('--admin', ADMIN_HELP);
/** `--dry-run` on a destructive verb. */
const dryRun = (c: Command): Command => c.option('--dry-run', 'show what would be deleted and change nothing');
const LABEL_HELP = 'ids are bare (0a1b2c) or names (labels/0a1b2c, labels/0a1b2c@published, labels/0a1b2c@3, labels/0a1b2c/revisions/3)';

/** `opsctl labels …`: the label-management service (Drive Labels API v2, or v2beta by the profile). */
export function register(program: Command, ctx: Context): void {
  const labels = program
    .command('labels')
    .description(NOUN_SUMMARIES.labels)
    .addHelpText('after', `\n${LABEL_HELP}. The bearer token comes from \`opsctl login\` or OPSCTL_ACCESS_TOKEN.`);
  examples(labels, 'opsctl labels list', 'opsctl labels apply -f labels/sensitivity.yaml --publish', 'opsctl labels get 0a1b2c --json');

  const list = labels
    .command('list')
    .alias('ls')
    .description('list labels with their state, revision and whether unpublished changes wait')
    .option('--published-only', 'only labels with a published revision (shows that revision)')
    .addOption(new Option('--minimum-role <role>', 'only labels where you have at least this role').choices(ROLE_CHOICES))
    .option('--admin', 'use admin access (useAdminAccess): every label of the organisation')
    .option('--limit <n>', 'stop after this many labels');
  list.action(
    lazyAction(
      ctx,
      () => import('./list.js'),
      (_a, o) => ({ publishedOnly: Boolean(o.publishedOnly), minimumRole: o.minimumRole, admin: Boolean(o.admin), limit: o.limit }),
    ),
  );
  examples(list, 'opsctl labels list --published-only', 'opsctl labels list --json=id,properties');

  const get = admin(labels.command(`get ${LABEL_ARG}`).description('show a label (latest revision unless the name says @published or @REV)'));
  get.action(
    lazyAction(
      ctx,
      () => import('./get.js'),
      ([label]: [string], o) => ({ label, admin: Boolean(o.admin) }),
    ),
  );
  examples(get, 'opsctl labels get 0a1b2c', 'opsctl labels get labels/0a1b2c@published --json');

  const create = labels
    .command('create')
    .description('create a draft label (revision 1)')
    .requiredOption('--title <text>', 'the title')
    .option('--description <text>', 'the description')
    .addOption(new Option('--type <type>', 'label type').choices(LABEL_TYPES.map(kebab)).default('shared'));
  create.action(
    lazyAction(
      ctx,
      () => import('./create.js'),
      (_a, o) => ({ title: o.title, description: o.description, type: o.type }),
    ),
  );
  examples(create, 'opsctl labels create --title Sensitivity --description "How secret"');

  for (const [name, desc] of [
    ['publish', 'publish the draft changes (a new published revision; older drafts are deleted)'],
    ['enable', 'enable a disabled label (back to its published state)'],
  ] as const) {
    const cmd = admin(labels.command(`${name} ${LABEL_ARG}`).description(desc));
    cmd.action(
      lazyAction(
        ctx,
        () => import('./lifecycle.js'),
        ([label]: [string], o) => ({ label, verb: name, admin: Boolean(o.admin) }),
      ),
    );
    examples(cmd, `opsctl labels ${name} 0a1b2c`);
  }
  const disable = admin(labels.command(`disable ${LABEL_ARG}`))
    .description('disable a published label')
    .option('--hide-in-search', 'hide the disabled label in the search menu')
    .option('--show-in-apply', 'keep showing it (unselectable) in the apply menu');
  disable.action(
    lazyAction(
      ctx,
      () => import('./lifecycle.js'),
      ([label]: [string], o) => ({
        label,
        verb: 'disable' as const,
        hideInSearch: Boolean(o.hideInSearch),
        showInApply: Boolean(o.showInApply),
        admin: Boolean(o.admin),
      }),
    ),
  );
  examples(disable, 'opsctl labels disable 0a1b2c --hide-in-search');

  const del = dryRun(admin(labels.command(`delete ${LABEL_ARG}`).alias('rm').description(`delete a draft or disabled label (${CONFIRM_HELP})`)));
  del.action(
    lazyAction(
      ctx,
      () => import('./delete.js'),
      ([label]: [string], o) => ({ label, admin: Boolean(o.admin), dryRun: Boolean(o.dryRun) }),
    ),
  );
  examples(del, 'opsctl labels delete 0a1b2c --yes');

  const copy = admin(
    labels
      .command(`copy-mode ${LABEL_ARG} <mode>`)
      .description(`how the label is copied with a Drive item: ${COPY_MODES.map(kebab).join(' | ')} (not revisioned)`),
  );
  copy.action(
    lazyAction(
      ctx,
      () => import('./copy-mode.js'),
      ([label, mode]: [string, string], o) => ({ label, mode, admin: Boolean(o.admin) }),
    ),
  );
  examples(copy, 'opsctl labels copy-mode 0a1b2c always-copy');

  const apps = admin(labels.command(`apps ${LABEL_ARG} [apps...]`).description('the apps where the label can be used: drive, gmail (none given: no apps)'));
  apps.action(
    lazyAction(
      ctx,
      () => import('./apps.js'),
      ([label, list]: [string, string[]], o) => ({ label, apps: list, admin: Boolean(o.admin) }),
    ),
  );
  examples(apps, 'opsctl labels apps 0a1b2c drive gmail');

  registerFields(labels, ctx);
  registerChoices(labels, ctx);
  registerPermissions(labels, ctx);

  const locks = labels.command(`locks ${LABEL_ARG}`).description('list the locks of a label or a revision').option('--revision <rev>', 'a revision id');
  locks.action(
    lazyAction(
      ctx,
      () => import('./locks.js'),
      ([label]: [string], o) => ({ label, revision: o.revision }),
    ),
  );
  examples(locks, 'opsctl labels locks 0a1b2c');

  const limits = labels.command('limits').description('the structural limits of a label (limits/label)');
  limits.action(
    lazyAction(
      ctx,
      () => import('./limits.js'),
      () => ({}),
    ),
  );
  examples(limits, 'opsctl labels limits', 'opsctl labels limits --json=maxFields,fieldLimits');
  const caps = labels.command('capabilities').description('what you may do with labels (users/me/capabilities)');
  caps.action(
    lazyAction(
      ctx,
      () => import('./capabilities.js'),
      () => ({}),
    ),
  );
  examples(caps, 'opsctl labels capabilities', 'opsctl labels capabilities --json');

  const apply = labels
    .command('apply')
    .description(
      `make labels match a file (YAML or JSON; one label or a list, or \`labels get/list --json\` output): title, description, copy mode, apps, disabled state, fields, choices (renamed_from keeps their ids), permissions (removing permissions or deleting fields/choices ${CONFIRM_HELP})`,
    )
    .requiredOption('-f, --file <path|->', 'the label file: YAML or JSON (- reads stdin)')
    .option('--dry-run', 'print the plan and send nothing')
    .option('--publish', 'publish the result when it has unpublished changes')
    .option('--admin', `${ADMIN_HELP} (on by itself for labelType: ADMIN)`);
  apply.action(
    lazyAction(
      ctx,
      () => import('./apply.js'),
      (_a, o) => ({ file: o.file, dryRun: Boolean(o.dryRun), publish: Boolean(o.publish), admin: Boolean(o.admin) }),
    ),
  );
  examples(
    apply,
    'opsctl labels apply -f sensitivity.yaml --dry-run',
    'opsctl labels apply -f sensitivity.yaml --publish',
    'opsctl labels get 0a1b2c --json | opsctl labels apply -f - --dry-run',
  );

  const exp = labels
    .command('export [label]')
    .description(
      'print a label (or --all you edit) in the apply-file format: YAML, or JSON with --json; `export | apply` changes nothing here and copies elsewhere',
    )
    .option('--all', 'every label you can edit (a list)')
    .option('--admin', ADMIN_HELP);
  exp.action(
    lazyAction(
      ctx,
      () => import('./export.js'),
      ([label], o) => ({ label, all: Boolean(o.all), admin: Boolean(o.admin) }),
    ),
  );
  examples(
    exp,
    'opsctl labels export 0a1b2c > sensitivity.yaml',
    'opsctl labels export --all > labels.yaml',
    'opsctl labels export --all | opsctl --profile other labels apply -f - --dry-run',
  );
}

function registerFields(labels: Command, ctx: Context): void {
  const fields = labels.command('fields').description('change the fields of a label (each change is a new draft revision)');
  const add = admin(fields.command(`add ${LABEL_ARG}`))
    .description('add a field')
    .requiredOption('--name <text>', 'the display name')
    .addOption(new Option('--type <type>', 'field type').choices(FIELD_TYPES).makeOptionMandatory())
    .option('--required', 'mark it required')
    .option('--choices <a,b,…>', 'choices of a selection field')
    .option('--list [maxEntries]', 'a selection or user field that holds a list')
    .addOption(new Option('--date-format <format>', 'date display').choices(['LONG_DATE', 'SHORT_DATE']))
    .option('--before <field>', 'insert before this field (id or name)');
  add.action(
    lazyAction(
      ctx,
      () => import('./fields-add.js'),
      ([label]: [string], o) => ({ ...o, label }),
    ),
  );
  examples(add, 'opsctl labels fields add 0a1b2c --name Level --type selection --choices Low,High');
  const update = admin(fields.command(`update ${LABEL_ARG} <field>`))
    .description('rename, (un)require or move a field')
    .option('--name <text>', 'the new display name')
    .option('--required', 'mark it required')
    .option('--no-required', 'mark it optional')
    .option('--before <field>', 'move before this field ("" moves it to the end)');
  update.action(
    lazyAction(
      ctx,
      () => import('./fields-update.js'),
      ([label, field]: [string, string], o) => ({ ...o, label, field }),
    ),
  );
  examples(update, 'opsctl labels fields update 0a1b2c Level --name Sensitivity --required');
  const fieldVerbs = { enable: () => import('./fields-enable.js'), disable: () => import('./fields-disable.js'), delete: () => import('./fields-delete.js') };
  for (const v of ['enable', 'disable', 'delete'] as const) {
    const cmd = admin(fields.command(`${v} ${LABEL_ARG} <field>`)).description(
      `${v} a field${v === 'delete' ? ` (a published one must be disabled first; ${CONFIRM_HELP})` : ''}`,
    );
    if (v === 'delete') dryRun(cmd);
    if (v === 'disable') cmd.option('--hide-in-search', 'hide it in search').option('--show-in-apply', 'keep showing it in the apply menu');
    cmd.action(lazyAction(ctx, fieldVerbs[v], ([label, field]: [string, string], o) => ({ ...o, label, field })));
    examples(cmd, `opsctl labels fields ${v} 0a1b2c Level`);
  }
}

function registerChoices(labels: Command, ctx: Context): void {
  const choices = labels.command('choices').description('change the choices of a selection field');
  const add = admin(choices.command(`add ${LABEL_ARG} <field>`))
    .description('add a choice')
    .requiredOption('--name <text>', 'the display name')
    .option('--description <text>', 'a description')
    .option('--before <choice>', 'insert before this choice (id or name)');
  add.action(
    lazyAction(
      ctx,
      () => import('./choices-add.js'),
      ([label, field]: [string, string], o) => ({ ...o, label, field }),
    ),
  );
  examples(add, 'opsctl labels choices add 0a1b2c Level --name Medium --before High');
  const update = admin(choices.command(`update ${LABEL_ARG} <field> <choice>`))
    .description('rename, describe or move a choice')
    .option('--name <text>', 'the new display name')
    .option('--description <text>', 'the description ("" clears it)')
    .option('--before <choice>', 'move before this choice ("" moves it to the end)');
  update.action(
    lazyAction(
      ctx,
      () => import('./choices-update.js'),
      ([label, field, choice]: [string, string, string], o) => ({ ...o, label, field, choice }),
    ),
  );
  examples(update, 'opsctl labels choices update 0a1b2c Level Low --name Minor');
  const choiceVerbs = {
    enable: () => import('./choices-enable.js'),
    disable: () => import('./choices-disable.js'),
    delete: () => import('./choices-delete.js'),
  };
  for (const v of ['enable', 'disable', 'delete'] as const) {
    const cmd = admin(choices.command(`${v} ${LABEL_ARG} <field> <choice>`)).description(
      `${v} a choice${v === 'delete' ? ` (a published one must be disabled first; ${CONFIRM_HELP})` : ''}`,
    );
    if (v === 'delete') dryRun(cmd);
    if (v === 'disable') cmd.option('--hide-in-search', 'hide it in search').option('--show-in-apply', 'keep showing it in the apply menu');
    cmd.action(lazyAction(ctx, choiceVerbs[v], ([label, field, choice]: [string, string, string], o) => ({ ...o, label, field, choice })));
    examples(cmd, `opsctl labels choices ${v} 0a1b2c Level Low`);
  }
}

function registerPermissions(labels: Command, ctx: Context): void {
  const perms = labels.command('permissions').alias('perms').description('who may read, apply, organise or edit a label (or a revision with --revision)');
  const rev = (c: Command) => admin(c.option('--revision <rev>', 'act on this revision of the label'));
  const list = rev(perms.command(`list ${LABEL_ARG}`).description('list permissions'));
  list.action(
    lazyAction(
      ctx,
      () => import('./permissions-list.js'),
      ([label]: [string], o) => ({ label, revision: o.revision, admin: Boolean(o.admin) }),
    ),
  );
  examples(list, 'opsctl labels permissions list 0a1b2c', 'opsctl labels permissions list 0a1b2c --revision 3 --json');
  const add = rev(perms.command(`add ${LABEL_ARG} <grants...>`).description('grant PRINCIPAL=ROLE (several at once: one :batchUpdate)'));
  add.action(
    lazyAction(
      ctx,
      () => import('./permissions-add.js'),
      ([label, grants]: [string, string[]], o) => ({ label, revision: o.revision, admin: Boolean(o.admin), grants }),
    ),
  );
  examples(
    add,
    'opsctl labels permissions add 0a1b2c bob@example.com=READER',
    'opsctl labels permissions add 0a1b2c carol@example.com=EDITOR audiences/default=APPLIER',
  );
  const update = rev(
    perms.command(`update ${LABEL_ARG} <grants...>`).description('create or change the role of PRINCIPAL=ROLE (PATCH …/permissions, one per grant)'),
  );
  update.action(
    lazyAction(
      ctx,
      () => import('./permissions-update.js'),
      ([label, grants]: [string, string[]], o) => ({ label, revision: o.revision, admin: Boolean(o.admin), grants }),
    ),
  );
  examples(
    update,
    'opsctl labels permissions update 0a1b2c bob@example.com=EDITOR',
    'opsctl labels permissions update Sensitivity audiences/default=READER --revision 3',
  );
  const remove = dryRun(
    rev(
      perms
        .command(`remove ${LABEL_ARG} <principals...>`)
        .description(`revoke by email, audience or permission name (several: one :batchDelete; ${CONFIRM_HELP})`),
    ),
  );
  remove.action(
    lazyAction(
      ctx,
      () => import('./permissions-remove.js'),
      ([label, principals]: [string, string[]], o) => ({
        label,
        revision: o.revision,
        admin: Boolean(o.admin),
        dryRun: Boolean(o.dryRun),
        principals,
      }),
    ),
  );
  examples(remove, 'opsctl labels permissions remove 0a1b2c bob@example.com');
  const set = dryRun(
    rev(
      perms
        .command(`set ${LABEL_ARG} [grants...]`)
        .description(`make the permissions exactly these PRINCIPAL=ROLE grants (one :batchUpdate + one :batchDelete; removing any ${CONFIRM_HELP})`),
    ),
  );
  set.action(
    lazyAction(
      ctx,
      () => import('./permissions-set.js'),
      ([label, grants]: [string, string[]], o) => ({
        label,
        revision: o.revision,
        admin: Boolean(o.admin),
        dryRun: Boolean(o.dryRun),
        grants,
      }),
    ),
  );
  examples(set, 'opsctl labels permissions set 0a1b2c bob@example.com=READER audiences/default=APPLIER');
}

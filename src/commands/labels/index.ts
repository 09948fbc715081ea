import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addGroup, defineGroup } from '../spec.js';
import { spec as apply } from './apply.spec.js';
import { spec as apps } from './apps.spec.js';
import { spec as capabilities } from './capabilities.spec.js';
import { spec as choicesAdd } from './choices-add.spec.js';
import { spec as choicesDelete } from './choices-delete.spec.js';
import { spec as choicesDisable } from './choices-disable.spec.js';
import { spec as choicesEnable } from './choices-enable.spec.js';
import { spec as choicesUpdate } from './choices-update.spec.js';
import { spec as copyMode } from './copy-mode.spec.js';
import { spec as create } from './create.spec.js';
import { spec as del } from './delete.spec.js';
import { spec as disable } from './disable.spec.js';
import { spec as enable } from './enable.spec.js';
import { spec as exportLabels } from './export.spec.js';
import { spec as fieldsAdd } from './fields-add.spec.js';
import { spec as fieldsDelete } from './fields-delete.spec.js';
import { spec as fieldsDisable } from './fields-disable.spec.js';
import { spec as fieldsEnable } from './fields-enable.spec.js';
import { spec as fieldsUpdate } from './fields-update.spec.js';
import { spec as get } from './get.spec.js';
import { spec as limits } from './limits.spec.js';
import { spec as list } from './list.spec.js';
import { spec as locks } from './locks.spec.js';
import { spec as permissionsAdd } from './permissions-add.spec.js';
import { spec as permissionsList } from './permissions-list.spec.js';
import { spec as permissionsRemove } from './permissions-remove.spec.js';
import { spec as permissionsSet } from './permissions-set.spec.js';
import { spec as permissionsUpdate } from './permissions-update.spec.js';
import { spec as publish } from './publish.spec.js';

const LABEL_HELP = 'ids are bare (0a1b2c) or names (labels/0a1b2c, labels/0a1b2c@published, labels/0a1b2c@3, labels/0a1b2c/revisions/3)';

/** `opsctl labels …`: the label-management service (Drive Labels API v2, or v2beta by the profile). Its verbs, in --help order. */
export const noun = defineGroup({
  name: 'labels',
  summary: NOUN_SUMMARIES.labels,
  help: `\n${LABEL_HELP}. The bearer token comes from \`opsctl login\` or OPSCTL_ACCESS_TOKEN.`,
  examples: ['opsctl labels list', 'opsctl labels apply -f labels/sensitivity.yaml --publish', 'opsctl labels get 0a1b2c --json'],
  verbs: [
    list,
    get,
    create,
    publish,
    enable,
    disable,
    del,
    copyMode,
    apps,
    {
      name: 'fields',
      summary: 'change the fields of a label (each change is a new draft revision)',
      verbs: [fieldsAdd, fieldsUpdate, fieldsEnable, fieldsDisable, fieldsDelete],
    },
    {
      name: 'choices',
      summary: 'change the choices of a selection field',
      verbs: [choicesAdd, choicesUpdate, choicesEnable, choicesDisable, choicesDelete],
    },
    {
      name: 'permissions',
      aliases: ['perms'],
      summary: 'who may read, apply, organise or edit a label (or a revision with --revision)',
      verbs: [permissionsList, permissionsAdd, permissionsUpdate, permissionsRemove, permissionsSet],
    },
    locks,
    limits,
    capabilities,
    apply,
    exportLabels,
  ],
});

export function register(program: Command, ctx: Context): void {
  addGroup(program, ctx, noun);
}

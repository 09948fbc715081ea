import { UsageError } from '../core/errors.js';
import { itemAt } from '../core/arrays.js';

export interface WorkflowStateRef {
  id: number;
  name: string;
  type?: string;
}
export interface WorkflowRef {
  id: number;
  name: string;
  states: WorkflowStateRef[];
}

/**
 * The workflow state a name means, for a story in `workflowId`: an exact match (case-insensitive) only,
 * never a prefix (`do` is not "Done"); a number is taken as a state id of that workflow. Unknown or
 * ambiguous names are refused (exit 2) listing the states that can be chosen.
 */
export function resolveState(workflows: readonly WorkflowRef[], workflowId: number | undefined, wanted: string): WorkflowStateRef & { workflow: string } {
  const pool = workflows.filter((w) => workflowId === undefined || w.id === workflowId);
  const all = pool.flatMap((w) => w.states.map((s) => ({ ...s, workflow: w.name })));
  const label = (s: { name: string; id: number; workflow: string }) => (pool.length > 1 ? `"${s.name}" (${s.workflow}, ${s.id})` : `"${s.name}" (${s.id})`);
  const choices = all.map(label).join(', ') || 'none';
  const trimmed = wanted.trim();
  if (/^\d+$/.test(trimmed)) {
    const byId = all.find((s) => s.id === Number(trimmed));
    if (byId) return byId;
    throw new UsageError(`--state: ${trimmed} is not a state of the story's workflow`, { field: 'state', hint: `choose one of: ${choices}` });
  }
  const key = trimmed.toLowerCase();
  const found = all.filter((s) => s.name.toLowerCase() === key);
  if (found.length === 1) return itemAt(found, 0);
  if (found.length === 0)
    throw new UsageError(`--state: no workflow state is named "${trimmed}"`, {
      field: 'state',
      hint: `choose one of: ${choices} (names match exactly, in any case)`,
    });
  throw new UsageError(`--state: "${trimmed}" matches ${found.length} workflow states`, {
    field: 'state',
    hint: `say which: ${found.map(label).join(', ')} (a state id works too)`,
  });
}

import { ApiError } from '../core/errors.js';
import { itemAt } from '../core/arrays.js';
import type { PlanStep } from './apply.js';
import type { TrackerClient } from './client.js';
import type { ResourceSpec } from './resources.js';

export interface StepFailure {
  step: PlanStep;
  message: string;
  status?: number;
}

export interface ApplyOutcome {
  applied: PlanStep[];
  failed: StepFailure[];
  /** Steps not attempted because the one they depend on failed. */
  skipped: PlanStep[];
  /** Set when the signal stopped the run: steps started but unfinished (their write may or may not have been made). */
  interrupted?: { inFlight: number; notStarted: number };
}

/**
 * Runs the writes of a plan, a few at a time (the HTTP layer paces them under the rate limit), and
 * keeps going past a failed write so that one bad record does not hold back the rest.
 */
export async function runWrites(
  client: TrackerClient,
  spec: ResourceSpec,
  steps: PlanStep[],
  opts: { concurrency?: number; onStep?: (done: number, total: number, failed: number) => void; signal?: AbortSignal } = {},
): Promise<ApplyOutcome> {
  const out: ApplyOutcome = { applied: [], failed: [], skipped: [] };
  const created = new Map<string, number | string>();
  const failedKeys = new Set<string>();
  // archive-after-create steps wait for their create, so creates run first as their own phase
  const phases = [steps.filter((s) => s.action === 'create'), steps.filter((s) => s.action !== 'create')];
  let done = 0;
  let started = 0;
  const stopped = () => opts.signal?.aborted === true;
  for (const phase of phases) {
    let next = 0;
    const worker = async () => {
      while (next < phase.length && !stopped()) {
        const step = itemAt(phase, next++);
        started++;
        const id = step.id ?? created.get(step.key);
        if (step.action !== 'create' && id === undefined) {
          out.skipped.push(step);
        } else {
          try {
            if (step.action === 'create') {
              const rec = await client.create<{ id: number | string }>(spec, step.body ?? {});
              created.set(step.key, rec.id);
            } else if (step.action === 'delete') await client.delete(spec, id!);
            else await client.update(spec, id!, step.body ?? {});
            out.applied.push(step);
          } catch (err) {
            if (!(err instanceof Error)) throw err;
            failedKeys.add(step.key);
            out.failed.push({ step, message: err.message, status: err instanceof ApiError ? err.status : undefined });
            if (err instanceof ApiError && err.status === 401) throw err;
          }
        }
        opts.onStep?.(++done, steps.length, out.failed.length);
      }
    };
    const workers = Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, phase.length) }, worker));
    // on an interrupt, answer at once with what is known rather than waiting out the pacer
    await (opts.signal ? Promise.race([workers, abortedPromise(opts.signal)]) : workers);
    if (stopped()) {
      const finished = out.applied.length + out.failed.length + out.skipped.length;
      return { ...out, applied: [...out.applied], interrupted: { inFlight: started - finished, notStarted: steps.length - started } };
    }
  }
  return out;
}

function abortedPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

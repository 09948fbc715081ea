/**
 * The kept containers and `kv backups prune` (issue 61, item 3). A hop keeps each member's stopped container
 * under CONTAINER.opsctl-kept-WHEN-ID: WHEN is the UTC second it was kept, written as run ids begin
 * (20261127T160040), ID its own short id. A kept container is the way back of the run that kept it: the
 * newest run of its cluster begun at or before WHEN (a cluster's runs never overlap: they hold its journal's
 * lock). So a prune removes, with the backups of the runs it removes, the containers those runs kept; never
 * one of a run it keeps.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { Engine } from './engine.js';
import type { ContainerSettings } from './settings.js';

/** The part of a kept container's name after the member's container name. */
export const KEPT = '.opsctl-kept-';

/** A moment as run ids begin: the UTC second, 20261127T160040. */
export function stampOf(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').slice(0, 15);
}

/** The name a container is kept under: the member's container, KEPT, when and its short id. */
export function keptName(container: string, id: string, at: Date): string {
  return `${container}${KEPT}${stampOf(at)}-${id.slice(0, 12)}`;
}

/** When a kept container was kept (its name's WHEN), or undefined: a name of an older opsctl (CONTAINER.opsctl-kept-ID), not dated. */
export function keptWhen(name: string): string | undefined {
  return /\.opsctl-kept-(\d{8}T\d{6})-[0-9a-f]+$/.exec(name)?.[1];
}

export interface KeptContainer {
  member: string;
  name: string;
  image: string;
  running: boolean;
}

export interface PruneVerdict {
  /** Removed by the prune: `run` the run that kept it (absent: kept before every run listed, whose backups are gone). */
  remove: Array<KeptContainer & { run?: string }>;
  /** Left, and why. */
  stay: Array<KeptContainer & { why: string }>;
}

/**
 * Which kept containers a prune removes, given the runs of their cluster it keeps and removes (run ids): those a
 * removed run kept, and those kept before every run listed. Never one of a run it keeps, one that runs (started
 * by hand since), or one an older opsctl named (not dated: its run cannot be told).
 */
export function keptToPrune(kept: readonly KeptContainer[], runs: { keep: readonly string[]; remove: readonly string[] }): PruneVerdict {
  const all = [...runs.keep.map((id) => ({ id, remove: false })), ...runs.remove.map((id) => ({ id, remove: true }))].sort((a, b) => a.id.localeCompare(b.id));
  const out: PruneVerdict = { remove: [], stay: [] };
  for (const k of kept) {
    const when = keptWhen(k.name);
    if (!when) {
      out.stay.push({ ...k, why: 'named by an older opsctl, without when it was kept: its run cannot be told (remove it by hand once it is not needed)' });
      continue;
    }
    const owner = all.filter((r) => r.id.slice(0, 15) <= when).pop();
    if (owner && !owner.remove) {
      out.stay.push({ ...k, why: `the way back of run ${owner.id}, which is kept` });
      continue;
    }
    if (k.running) {
      out.stay.push({ ...k, why: 'it runs (started by hand since it was kept)' });
      continue;
    }
    out.remove.push({ ...k, ...(owner ? { run: owner.id } : {}) });
  }
  return out;
}

/** What listing and removing kept containers asks of the container driver (driver.ts). */
export interface KeptDriver {
  readonly engine: Engine;
  kept(m: MemberSpec): Promise<ContainerSettings[]>;
}

/** Every member's kept containers, as the engine has them. */
export async function keptOf(d: KeptDriver, members: readonly MemberSpec[]): Promise<KeptContainer[]> {
  const out: KeptContainer[] = [];
  for (const m of members) for (const c of await d.kept(m)) out.push({ member: m.name, name: c.name, image: c.image, running: c.running });
  return out;
}

/** One kept container removed (`rm`, never forced: one that runs is refused by the engine itself). The detail. */
export async function removeKept(d: KeptDriver, m: MemberSpec, name: string): Promise<string> {
  await d.engine.must(m, ['rm', name]);
  return `${d.engine.program} rm ${name}`;
}

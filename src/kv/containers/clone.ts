/**
 * The rehearsal's clone of container members (kv/rehearsal): the same containers, made again under names of
 * their own from each member's settings as the engine reports them, on copies of their data, in the clone's
 * network namespace. Only where the engine is podman on this machine, run as root: podman has no daemon, so
 * a container it starts joins the namespaces of the podman that starts it (`--network host`: the clone's
 * network, whose loopback carries the members' own addresses; its volumes' directories: the clone's mount
 * namespace, where each member's data dir is its copy). docker's daemon starts containers in its own
 * namespaces: a clone's member would share the cluster's network and data, so docker members are not cloned.
 *
 * The members' processes are the engine's (conmon's): the clone's run has no PID namespace of its own (the
 * engine must outlive it to remove them cleanly), and the parent removes every clone container after the run
 * (dropClone); a clone left by an opsctl killed meanwhile is removed by the next look for a clone (its
 * owner, by PID and start time, gone).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileProblem } from '../../core/file-errors.js';
import { LocalFileError } from '../../core/local-file.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { minor } from '../cluster/parse.js';
import type { CloneOf } from '../drivers/driver.js';
import { procStartTime } from '../drivers/member-procs.js';
import { CLONE_RECORD, cloneAddresses } from '../rehearsal/clone-find.js';
import { EngineError, failure } from './engine.js';
import { engineDirs, type DirsDriver } from './dirs.js';
import { createArgs } from './settings.js';

/** The part of a clone container's name after the member's container name: CONTAINER.opsctl-clone-PID-START. */
export const CLONE = '.opsctl-clone-';

/** What the parent leaves in the clone for its run (CLONE_RECORD): the clone's tag and each member's minor. */
export interface ContainerCloneRecord {
  kind: 'container';
  tag: string;
  members: Array<{ name: string; version: string }>;
}

/** Inside the clone: the record the parent left in the clone's copy of opsctl's data directory (`dataDir`). */
export async function readContainerClone(dataDir: string): Promise<ContainerCloneRecord> {
  const file = join(dataDir, CLONE_RECORD);
  const text = await readFile(file, 'utf8').catch((err: Error) => {
    throw new LocalFileError(file, `cannot be read: ${fileProblem(err)}`, RECORD_WORDS);
  });
  const record = parseCloneRecord(text);
  if (!record) throw new LocalFileError(file, "is not the record of a container clone's members", RECORD_WORDS);
  return record;
}

const RECORD_WORDS = {
  what: "the rehearsal's record of the clone's containers",
  hint: 'opsctl writes it into the clone it makes: run opsctl kv upgrade --rehearse, not --rehearsal-clone by hand',
};

/** The record as the clone's run reads it (its text), or undefined where it is not one. */
export function parseCloneRecord(text: string): ContainerCloneRecord | undefined {
  let doc: Partial<ContainerCloneRecord> | undefined;
  try {
    doc = JSON.parse(text) as Partial<ContainerCloneRecord>;
  } catch {
    return undefined;
  }
  const members = Array.isArray(doc?.members) ? doc.members : [];
  const named = members.length > 0 && members.every((m) => m && typeof m.name === 'string' && typeof m.version === 'string');
  if (doc?.kind !== 'container' || typeof doc.tag !== 'string' || !/^opsctl-clone-\d+-\d+$/.test(doc.tag) || !named) return undefined;
  return { kind: 'container', tag: doc.tag, members };
}

/** This opsctl's clone tag: its PID and start time (a later look removes the clones of one that is gone). */
export function cloneTag(pid = process.pid): string {
  return `${CLONE.slice(1)}${pid}-${procStartTime(pid) ?? '0'}`;
}

/** Whether the owner a clone container's name gives (PID and start time) is gone. */
function ownerGone(name: string): boolean {
  const m = /\.opsctl-clone-(\d+)-(\d+)(?:\.|$)/.exec(name);
  if (!m) return false;
  const now = procStartTime(Number(m[1]));
  return now === undefined || now !== m[2];
}

/** Why containers of this engine cannot be cloned here, or undefined. */
function engineProblem(d: DirsDriver, uid: number | undefined): string | undefined {
  const between = d.engine.serviceBetween();
  if (between) return `${between}: a clone's member would share the cluster's network and data (members that podman runs here, as root, are cloned)`;
  if (uid !== 0) return "podman runs rootless here: a clone's containers are made by podman as root";
  return undefined;
}

/**
 * Whether the members' containers can be cloned here, and of what: each member's container running on the
 * host's network (its process paused with the others for the copy), its data dir and WAL dir on the host
 * (copied, each copy mounted over its path in the clone), and the record the clone's run reads. Clones left
 * by an opsctl that is gone are removed first.
 */
export async function findContainerClone(d: DirsDriver, members: readonly MemberSpec[], uid: number | undefined): Promise<CloneOf | { why: string }> {
  const problem = engineProblem(d, uid);
  if (problem) return { why: problem };
  await Promise.all(members.map((m) => reapClones(d, m)));
  const found = await Promise.all(
    members.map(async (m) => {
      const c = await d.engine.inspect(m, d.containerOf(m));
      if (!c) return { why: `the engine has no container ${d.containerOf(m)} (member ${m.name})` };
      if (!c.running || !c.pid) return { why: `${c.name} (member ${m.name}) is not running: a clone is copied from running members` };
      if (c.network.mode !== 'host')
        return {
          why: `${c.name} (member ${m.name}) runs on the engine's ${c.network.mode} network: a clone is made of members on the host's network (--network host), whose addresses its own network can carry`,
        };
      const dirs = await engineDirs(d, m);
      if ('why' in dirs) return { why: `${m.name}: ${dirs.why}` };
      const v = await d.engine.run(m, ['exec', c.name, c.argv[0] ?? '/usr/local/bin/etcd', '--version']);
      const version = minor(/etcd Version:\s*(\S+)/.exec(v.stdout)?.[1] ?? '');
      if (!version) return { why: `${m.name}: \`${d.engine.program} exec ${c.name} ${c.argv[0] ?? 'etcd'} --version\` printed no "etcd Version:"` };
      return { name: m.name, pid: c.pid, version, dirs };
    }),
  );
  const why = found.find((f): f is { why: string } => 'why' in f);
  if (why) return why;
  const ok = found as Exclude<(typeof found)[number], { why: string }>[];
  const record: ContainerCloneRecord = { kind: 'container', tag: cloneTag(), members: ok.map((f) => ({ name: f.name, version: f.version })) };
  const addresses = cloneAddresses(members);
  return {
    paths: [],
    pause: ok.map((f) => f.pid),
    outside: [...new Set(ok.flatMap((f) => [f.dirs.dataDir, ...(f.dirs.walDir ? [f.dirs.walDir] : [])]))],
    files: { [CLONE_RECORD]: `${JSON.stringify(record, null, 2)}\n` },
    ...(addresses.length ? { addresses } : {}),
    engineRuns: true,
    // (the cluster file the clone's run is given may be named relative to the operator's directory)
    operatorCwd: true,
    dirs: Object.fromEntries(ok.map((f) => [f.name, f.dirs])),
  };
}

/** Every container of this opsctl's clone (its tag's) removed, the kept ones of its run included; what was removed. */
export async function dropClone(d: DirsDriver, members: readonly MemberSpec[], tag = cloneTag()): Promise<string[]> {
  const gone: string[] = [];
  for (const m of members) {
    for (const c of await d.engine.containersNamed(m, `${d.containerOf(m)}.${tag}`)) {
      const r = await d.engine.run(m, ['rm', '--force', '--time', '0', c.name]);
      if (r.exitCode !== 0) throw new EngineError(`the rehearsal's clone container ${c.name} was not removed: ${failure(r, 120_000)}`);
      gone.push(c.name);
    }
  }
  return gone;
}

/** The clone containers of opsctl processes that are gone (killed before they removed them), removed. */
async function reapClones(d: DirsDriver, m: MemberSpec): Promise<void> {
  for (const c of await d.engine.containersNamed(m, `${d.containerOf(m)}${CLONE}`)) {
    if (ownerGone(c.name)) await d.engine.run(m, ['rm', '--force', '--time', '0', c.name]);
  }
}

/**
 * Inside the clone, a member's first start: its container made again under its clone name (`name`) from the
 * cluster member's own container's settings and image, read only, and started; what it did. Undefined where
 * the clone's container is there already (a start of the driver's own then). Never a change to a container
 * not of the clone.
 */
export async function firstCloneStart(d: Pick<DirsDriver, 'engine'>, m: MemberSpec, names: { own: string; clone: string }): Promise<string | undefined> {
  if (await d.engine.inspect(m, names.clone)) return undefined;
  const real = await d.engine.inspect(m, names.own);
  if (!real) throw new EngineError(`the clone's ${m.name}: the engine has no container ${names.own} to make it from`);
  const oldImage = await d.engine.image(m, real.imageId || real.image);
  const image = real.imageId || real.image;
  await d.engine.must(m, createArgs({ settings: real, ...(oldImage ? { oldImage } : {}), name: names.clone, image, member: m.name }));
  await d.engine.must(m, ['start', names.clone]);
  return `${names.clone} created from ${real.name}'s settings and image (${real.image}) and started`;
}

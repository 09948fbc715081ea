/**
 * What the sandbox's members run: the simulated member (packages/etcd-sim, `kv sandbox up`), or etcd
 * from a directory of binaries (`kv sandbox up --etcd-bin`). The one file of src/ that reads a sandbox's
 * kind and imports the simulator (test/unit/sim-boundary.test.ts): the local driver starts members
 * through the program chosen here, and every kv flow asks the driver what it needs to know of it
 * (MemberDriver.capabilities: no etcd data, no binary, each minor's release; etcdFromDir: a binary directory every start needs).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { simulatedAt } from '@opsctl/etcd-sim/program.js';
import { SIM_MINORS, SIM_RELEASES } from '@opsctl/etcd-sim/releases.js';
import type { MemberSpec, SandboxSpec } from '../cluster/cluster-file.js';
import type { MemberProgram } from '../drivers/local.js';
import type { ProgramAt } from '../drivers/local-reach.js';
import type { ProgramCapabilities } from '../drivers/driver.js';
import { oneOffSettings } from '../drivers/member-files.js';
import { etcdRestore } from '../drivers/restore-data.js';
import { parseSimSnapshot } from '../snapshot/status.js';
import { isSea } from '../../core/sea.js';

type Exec = typeof import('execa').execa;

/** The minors a simulated member runs (kv sandbox up --version, kv restore --to-version). */
export const SIMULATED_MINORS: readonly string[] = SIM_MINORS;

/** What a flow may do with simulated members: no etcd data, no binary (each minor's release is the version it is told). */
const SIMULATED: ProgramCapabilities = {
  etcdData: false,
  askVersion: false,
  releases: SIM_RELEASES,
  what: 'simulated',
};

/**
 * A running member's command line as the same member on another version, when it is the sandbox's own program
 * (the command driver's trial of one found on this host), with that program's capabilities; undefined for etcd.
 */
export const sandboxProgramAt: ProgramAt = (argv, version) => {
  const at = simulatedAt(argv, version);
  return at && { ...at, capabilities: SIMULATED };
};

/** The kind `kv sandbox up` records: etcd from `--etcd-bin DIR`, else simulated members. */
export function sandboxKind(etcdBin: string | undefined): SandboxSpec['kind'] {
  return etcdBin ? 'etcd' : 'sim';
}

/** The program of `spec`'s members: chosen once, here, from the kind `kv sandbox up` recorded. */
export function sandboxProgram(spec: SandboxSpec, exec: Exec, env: NodeJS.ProcessEnv): MemberProgram {
  return spec.kind === 'sim' ? simulatedMembers(env) : etcdMembers(exec);
}

/**
 * How to start a simulated member: the running executable itself with `__kv-member` when opsctl is
 * one file (the single executable has no node to run a script with), else node with the member script.
 */
export function memberArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  if (isSea()) return ['__kv-member'];
  return [memberProgram(env)];
}

/** Where the simulated member program is: dist/kv-member.cjs next to the bundle, or from the sources. */
export function memberProgram(env: NodeJS.ProcessEnv = process.env): string {
  const here = import.meta.dirname; // the build makes it the chunk's __dirname
  const candidates = [
    env.OPSCTL_KV_MEMBER,
    join(here, '../kv-member.cjs'), // dist/chunks/*.cjs
    join(here, 'kv-member.cjs'), // dist/*.cjs
    join(here, '../../../dist/kv-member.cjs'), // src/kv/sandbox/*.ts
  ].filter((x): x is string => Boolean(x));
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`the simulated kv member program is missing (looked for ${candidates.join(', ')}): run npm run build`);
  return found;
}

/** A member's settings as flags, when it has no config file (the sandbox writes one per member; older sandboxes had none). */
function memberFlags(sandbox: SandboxSpec, s: MemberSpec): string[] {
  const cluster = sandbox.members.map((x) => `${x.name}=${x.peerUrl}`).join(',');
  return [
    '--name',
    s.name,
    '--data-dir',
    s.dataDir!,
    '--listen-client-urls',
    s.endpoint,
    '--listen-peer-urls',
    s.peerUrl!,
    '--initial-cluster',
    cluster,
    '--initial-cluster-token',
    sandbox.token,
    '--heartbeat-interval',
    String(sandbox.heartbeatMs),
  ];
}

/** The simulated member: node (or the single executable) with its script and `--kv-version`; its state file restored from its own snapshots. */
function simulatedMembers(env: NodeJS.ProcessEnv): MemberProgram {
  return {
    capabilities: SIMULATED,
    command: (sandbox, s, target) => ({
      file: process.execPath,
      program: [...memberArgs(env), '--kv-version', target.version],
      // the member's config file holds every setting, as for etcd
      settings: s.configFile ? ['--config-file', s.configFile] : memberFlags(sandbox, s),
    }),
    missing: () => undefined,
    version: (_m, target) => Promise.resolve({ version: target.version }),
    // a simulated member takes no one-off settings (the --fix-v2store restart is etcd's)
    beforeStart: () => Promise.resolve(),
    // its state file written from the snapshot's state (its keys and revision; the cluster version is
    // decided again by the members, as after a real restore)
    async stageRestore(_m, r, staged) {
      const snap = parseSimSnapshot(readFileSync(r.snapshot));
      await mkdir(join(staged, 'member'), { recursive: true });
      writeFileSync(join(staged, 'member', 'kv.json'), JSON.stringify({ revision: snap.revision, kvs: snap.kvs, clusterVersion: '', clients: {} }));
    },
  };
}

/** etcd from the directory of each start's target (kv sandbox up --etcd-bin, --target-bin, kv release get). */
function etcdMembers(exec: Exec): MemberProgram {
  return {
    etcdFromDir: true,
    command(sandbox, s, target) {
      if (!target.binDir) throw new Error(`member ${s.name}: no etcd binary directory to start`);
      const file = join(target.binDir, 'etcd');
      // The member's config file holds every setting (real etcd ignores its flags when given one).
      if (s.configFile) return { file, program: [], settings: ['--config-file', s.configFile] };
      const settings = [
        ...memberFlags(sandbox, s),
        ...Object.entries(target.settings ?? {}).flatMap(([k, v]) => [`--${k}`, v]),
        '--advertise-client-urls',
        s.endpoint,
        '--initial-advertise-peer-urls',
        s.peerUrl!,
        '--initial-cluster-state',
        'new',
        '--election-timeout',
        String(sandbox.heartbeatMs * 10),
      ];
      return { file, program: [], settings };
    },
    missing: (target) =>
      target.binDir
        ? undefined
        : `no etcd ${target.version} binaries are known for this member (--target-bin ${target.version}=DIR, or opsctl kv release get ${target.version}.N)`,
    async version(m, target) {
      const dir = target.binDir;
      if (!dir) return { why: `no etcd ${target.version} binaries are known for ${m.name}` };
      const r = await exec(join(dir, 'etcd'), ['--version'], { reject: false, timeout: 30_000, extendEnv: false, env: { PATH: '/usr/bin:/bin' } });
      const v = /etcd Version:\s*(\S+)/.exec(String(r.stdout ?? ''))?.[1];
      return v
        ? { version: v }
        : {
            why: `${join(dir, 'etcd')} --version printed no "etcd Version:" (${r.exitCode === undefined ? (r.originalMessage ?? 'did not run') : `exit ${r.exitCode}`})`,
          };
    },
    // real etcd reads no flags beside --config-file: one-off settings go into the file (member-files.ts)
    beforeStart: (configFile, target) => oneOffSettings(configFile, target.settings),
    stageRestore: (m, r, staged) => etcdRestore(m, r, staged, exec),
  };
}

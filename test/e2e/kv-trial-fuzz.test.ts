import { execa, execaSync } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { RENAMED_36 } from '../../src/kv/rules/hop-3.6.js';
import { runTrials } from '../../src/kv/trial/run.js';
import type { StartSettings } from '../../src/kv/drivers/start-settings.js';
import { exitMessage } from '../../src/kv/trial/verdict.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { seeded, type Rng } from '../helpers/fuzz.js';

/**
 * The trial's verdict against a real start, on 200 option sets (50 per hop target: 3.3, 3.4, 3.5, 3.6)
 * drawn from each binary's own flag list (`etcd --help`): valid values, renamed flags (the old name),
 * flags the previous version had and this one removed, values of the wrong type, and a flag shadowed by
 * its ETCD_* variable. The real start runs the option set as a member would (its own name, data dir and
 * ports); the trial gets the same settings as a member's and rewrites what it must. Both must agree: the
 * binary serves /health, or it exits with the same code and the same message.
 */
const dirs = etcdLadderDirs();
const SETS_PER_VERSION = 50;
const SEED = Number(process.env.OPSCTL_FUZZ_SEED ?? 20261125);
/** What the trial rewrites (its dirs, URLs, cluster) or drops (discovery), and what would make a start wait on something else. */
const LEFT_OUT =
  /^(name|data-dir|wal-dir|listen-|advertise-|initial-|discovery|config-file|log-output|proxy$|quota-backend-bytes|enable-log-rotation|force-new-cluster|experimental-enable-distributed-tracing|enable-pprof|experimental-memory-mlock|memory-mlock|client-cert-auth|peer-client-cert-auth|auto-tls|peer-auto-tls|self-signed-cert-validity)/;

type Kind = 'bool' | 'int' | 'duration' | 'string';
interface Flag {
  key: string;
  kind: Kind;
  def: string;
}

/** A binary's flags from its --help: `  --key 'default'`, the kind told by the default. */
function flagsOf(bin: string): Flag[] {
  const help = execaSync(bin, ['--help'], { reject: false, all: true }).all ?? '';
  const out: Flag[] = [];
  for (const m of help.matchAll(/^\s+--([a-z0-9-]+) '([^']*)'/gm)) {
    const [, key, def] = m as unknown as [string, string, string];
    const kind: Kind = /^(true|false)$/.test(def) ? 'bool' : /^-?\d+$/.test(def) ? 'int' : /^\d+(\.\d+)?(ns|us|ms|s|m|h)$/.test(def) ? 'duration' : 'string';
    out.push({ key, kind, def });
  }
  return out;
}

/** A valid value of a flag: its default, or a close neighbour of it. */
function valid(f: Flag, rng: Rng): string | undefined {
  if (f.kind === 'bool') return rng.pick(['true', 'false']);
  if (f.kind === 'int') return String(Number(f.def) + rng.int(2));
  if (f.kind === 'duration') return f.def;
  return f.def === '' || f.def.includes('${') ? undefined : f.def;
}

const WRONG: Record<Exclude<Kind, 'string'>, string[]> = { bool: ['maybe', 'yes please'], int: ['abc', '1.5', '12k'], duration: ['5x', 'soon'] };

interface OptionSet {
  label: string;
  args: string[];
  env: Record<string, string>;
}

/** One option set of 1-3 options for `target`, each drawn from one of the five kinds. */
function draw(rng: Rng, target: string, flags: Flag[], before: Flag[]): OptionSet {
  const usable = flags.filter((f) => !LEFT_OUT.test(f.key));
  const removed = before.filter((f) => !flags.some((x) => x.key === f.key) && !LEFT_OUT.test(f.key));
  const renamed: Record<string, string> = target === '3.6' ? { ...RENAMED_36 } : target === '3.4' || target === '3.5' ? { 'log-output': '--log-outputs' } : {};
  const set: OptionSet = { label: '', args: [], env: {} };
  const labels: string[] = [];
  const used = new Set<string>();
  for (let n = 1 + rng.int(3), tries = 0; labels.length < n && tries < 50; tries++) {
    const kind = rng.pick(['valid', 'valid', 'renamed', 'removed', 'wrong type', 'shadowed'] as const);
    if (kind === 'removed' && removed.length) {
      const f = rng.pick(removed);
      const v = valid(f, rng) ?? 'x';
      if (used.has(f.key)) continue;
      set.args.push(f.kind === 'bool' ? `--${f.key}=${v}` : `--${f.key}=${v}`);
      labels.push(`removed --${f.key}=${v}`);
      used.add(f.key);
    } else if (kind === 'renamed' && Object.keys(renamed).length) {
      const old = rng.pick(Object.keys(renamed));
      if (used.has(old) || (old.startsWith('experimental-distributed') && old !== 'experimental-distributed-tracing-sampling-rate')) continue;
      const f = [...flags, ...before].find((x) => x.key === old);
      const v = old === 'log-output' ? 'default' : f ? valid(f, rng) : undefined;
      if (v === undefined) continue;
      set.args.push(`--${old}=${v}`);
      labels.push(`renamed --${old}=${v}`);
      used.add(old);
    } else if (kind === 'wrong type') {
      const f = rng.pick(usable.filter((x) => x.kind !== 'string'));
      if (used.has(f.key)) continue;
      const v = rng.pick(WRONG[f.kind as Exclude<Kind, 'string'>]);
      set.args.push(`--${f.key}=${v}`);
      labels.push(`wrong type --${f.key}=${v}`);
      used.add(f.key);
    } else {
      const f = rng.pick(usable);
      const v = valid(f, rng);
      if (v === undefined || used.has(f.key)) continue;
      if (kind === 'shadowed') {
        set.args.push(`--${f.key}=${v}`);
        set.env[`ETCD_${f.key.toUpperCase().replace(/-/g, '_')}`] = v;
        labels.push(`shadowed --${f.key} and ETCD_${f.key.toUpperCase().replace(/-/g, '_')}`);
      } else {
        set.args.push(`--${f.key}=${v}`);
        labels.push(`valid --${f.key}=${v}`);
      }
      used.add(f.key);
    }
  }
  set.label = labels.join(', ');
  return set;
}

type Verdict = { kind: 'serves' } | { kind: 'exits'; code: number; message: string } | { kind: 'neither' };

/** The real start: the binary with the option set as a member runs it (its own name, data dir, ports), judged from outside. */
async function realStart(bin: string, set: OptionSet, timeoutMs: number): Promise<Verdict> {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-fuzz-real-'));
  const [client, peer] = [await freePort(), await freePort()];
  const child = execa(
    bin,
    [
      '--name=fuzz',
      `--data-dir=${dir}/data`,
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=fuzz=http://127.0.0.1:${peer}`,
      ...set.args,
    ],
    { reject: false, all: true, extendEnv: false, env: { PATH: '/usr/bin:/bin', ...set.env }, cwd: dir },
  );
  let exited: { code: number } | undefined;
  void child.then((r) => (exited = { code: r.exitCode ?? -1 }));
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (exited) {
        const r = await child;
        return { kind: 'exits', code: exited.code, message: exitMessage(String(r.all ?? '')) };
      }
      const body = await fetch(`http://127.0.0.1:${client}/health`, { signal: AbortSignal.timeout(2000) })
        .then((res) => (res.status === 200 ? res.text() : ''))
        .catch(() => '');
      if (body.includes('true')) return { kind: 'serves' };
      await new Promise((r) => setTimeout(r, 50));
    }
    return { kind: 'neither' };
  } finally {
    child.kill('SIGKILL');
    await child.catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A driver for one member whose settings are the option set's: the trial runs through the same `sh -s` as for the sandbox. */
function driverFor(bin: string, set: OptionSet): MemberDriver {
  const settings: StartSettings = {
    program: [bin],
    args: [
      '--name=fuzz',
      '--data-dir=/var/lib/etcd-fuzz-not-used',
      '--listen-client-urls=http://10.0.0.1:2379',
      '--advertise-client-urls=http://10.0.0.1:2379',
      '--listen-peer-urls=http://10.0.0.1:2380',
      '--initial-advertise-peer-urls=http://10.0.0.1:2380',
      '--initial-cluster=fuzz=http://10.0.0.1:2380,other=http://10.0.0.2:2380',
      '--initial-cluster-state=existing',
      ...set.args,
    ],
    env: set.env,
    from: { args: 'the fuzz set', env: 'the fuzz set' },
  };
  const unused = () => Promise.reject(new Error('not in a trial'));
  return {
    type: 'local',
    stop: unused,
    start: unused,
    isRunning: unused,
    current: () => undefined,
    startSettings: () => Promise.resolve(settings),
    async hostShell(_m, script, timeoutMs) {
      const r = await execa('sh', ['-s'], { input: script, reject: false, timeout: timeoutMs, extendEnv: false, env: { PATH: '/usr/bin:/bin' } });
      return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode };
    },
  };
}

/** A message with the run's own paths and ports taken out (the trial's scratch dir is not the real start's). */
const plain = (m: string) => m.replace(/\/tmp\/opsctl-[\w.-]+/g, '<dir>').replace(/\d{4,}/g, '<n>');

describe.runIf(Boolean(dirs))("the trial's verdict agrees with a real start: 200 option sets from each version's flag list", () => {
  const found: string[] = [];
  afterAll(() => {
    if (found.length) process.stderr.write(`\nkv trial fuzz (seed ${SEED}) disagreements:\n${found.join('\n')}\n`);
  });

  it('valid, renamed, removed, wrong type and shadowed options on 3.3, 3.4, 3.5 and 3.6: 200 of 200 agree', async () => {
    const rng = seeded(SEED);
    const targets = [
      { v: '3.3', bin: join(dirs!.v33, 'etcd'), before: join(dirs!.v32, 'etcd') },
      { v: '3.4', bin: join(dirs!.v34, 'etcd'), before: join(dirs!.v33, 'etcd') },
      { v: '3.5', bin: join(dirs!.v35, 'etcd'), before: join(dirs!.v34, 'etcd') },
      { v: '3.6', bin: join(dirs!.v36, 'etcd'), before: join(dirs!.v35, 'etcd') },
    ];
    const cases = targets.flatMap((t) => {
      const flags = flagsOf(t.bin);
      const before = flagsOf(t.before);
      expect(flags.length, `${t.bin} --help lists its flags`).toBeGreaterThan(50);
      return Array.from({ length: SETS_PER_VERSION }, () => ({ ...t, set: draw(rng, t.v, flags, before) }));
    });
    expect(cases).toHaveLength(200);
    const member: MemberSpec = { name: 'fuzz', endpoint: 'http://10.0.0.1:2379' };
    const tally = { serves: 0, exits: 0, neither: 0 };
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < cases.length; i = next++) {
        const c = cases[i]!;
        const [real, [trial]] = await Promise.all([
          realStart(c.bin, c.set, 60_000),
          runTrials([{ hop: `to ${c.v}`, member, target: { version: c.v } }], { driver: driverFor(c.bin, c.set), timeoutS: 60, parallel: 1 }),
        ]);
        tally[real.kind]++;
        const want = real.kind === 'serves' ? 'ok' : real.kind === 'exits' ? 'problem' : 'not-checked';
        const quoted =
          /exited \((\d+)\) in \d+ ms: "([\s\S]*)"; the setting/.exec(trial!.detail) ??
          /exited \((\d+)\) in \d+ ms: "([\s\S]*)"; its settings/.exec(trial!.detail);
        const agrees =
          trial!.result === want &&
          (real.kind !== 'exits' || (quoted !== null && Number(quoted[1]) === real.code && plain(quoted[2]!) === plain(real.message || 'it printed nothing')));
        if (!agrees)
          found.push(
            `${c.v} [${c.set.label}]${Object.keys(c.set.env).length ? ` env ${JSON.stringify(c.set.env)}` : ''}: real ${JSON.stringify(real)}; trial ${trial!.result}: ${trial!.detail}`,
          );
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    process.stderr.write(
      `kv trial fuzz (seed ${SEED}): ${cases.length} option sets, real starts: ${tally.serves} served, ${tally.exits} exited, ${tally.neither} neither\n`,
    );
    expect(found, found.join('\n')).toEqual([]);
    // every kind of outcome was exercised
    expect(tally.serves).toBeGreaterThan(20);
    expect(tally.exits).toBeGreaterThan(20);
  }, 900_000);
});

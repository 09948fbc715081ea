/**
 * A command-driver cluster whose members run on other hosts, cloned here (issue kv-rehearse, item 4): the
 * driver reaches each host by its trial template (`ssh {host} sudo sh -s`), so each member's files can be
 * brought to this machine (kv/rehearsal/fetch.ts: every member paused at once, a dead-man's switch on each
 * host) and the clone runs every member here, each in a mount namespace of its own where its copies are
 * mounted over its own paths (two hosts' members keep their data at the same path). The clone has no
 * network to the hosts: what its run would read there is read now, by the parent, and left in the clone's
 * record (each member's settings on every later minor, as the settings template prints them, and the
 * config template's output). Not rehearsed, with the reason on the plan: a member with certificates unless the
 * operator says so (--rehearsal-copy-keys: its certificate, key and CA files brought here with its data, in the
 * copy opsctl removes after the run), a member whose binaries are not on this machine at the same paths (the clone
 * starts them here), a copy over --rehearsal-max-copy (measured on the hosts: kv/ladder/rehearsal.ts holds it).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { LADDER_MINORS } from '@opsctl/shared/etcd-ladder.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { capabilitiesOf, type CloneOf, type CloneReach } from '../drivers/driver.js';
import { configFileOf, dataDirOf, flagWords, type StartSettings } from '../drivers/start-settings.js';
import { parseYaml } from '../../core/yaml.js';
import { shellWord } from '../drivers/host-script.js';
import { CLONE_RECORD, cloneAddresses, runningMember, runningMinor, type ClonedMember } from './clone-find.js';

/** A member's settings on a later minor, read by the parent (the clone cannot reach the settings template's host). */
export type AwaySettings = Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string };

/** Words a member with certificates has in its settings (its keys never leave its host: its rehearsal is not run here). */
const TLS_WORDS = /(?:^|[-_\s])(?:cert-file|key-file|trusted-ca-file|client-cert-auth|auto-tls)|(?:CERT|KEY|TRUSTED_CA)_FILE|https:\/\//i;

/** The members, every one reached through `r.reach` (the trial template), cloned here; or why not. */
export async function findAwayClone(members: readonly MemberSpec[], r: CloneReach): Promise<CloneOf | { why: string }> {
  const found = await Promise.all(members.map((m) => lookAway(m, r)));
  const why = found.find((f): f is { why: string } => 'why' in f);
  if (why) return why;
  const ok = found as Exclude<(typeof found)[number], { why: string }>[];
  const bytes = ok.reduce((n, f) => n + f.bytes, 0);
  const addresses = cloneAddresses(members);
  return {
    paths: [],
    fetch: ok.map((f) => ({ member: f.member.name, argv: f.argv, pid: f.pid, paths: f.member.fetched! })),
    mountPoints: [...new Set(ok.flatMap((f) => f.member.fetched!))],
    files: { [CLONE_RECORD]: `${JSON.stringify({ members: ok.map((f) => f.member) }, null, 2)}\n` },
    ...(addresses.length ? { addresses } : {}),
    operatorCwd: true,
    bytes,
    // (no `dirs`: their data dirs are on their hosts, never read here as this machine's; the clone's record has them)
  };
}

async function lookAway(
  m: MemberSpec,
  r: CloneReach,
): Promise<{ why: string } | { pid: number; bytes: number; argv: readonly string[]; member: ClonedMember }> {
  const argv = r.reach?.(m);
  if (!argv?.length) return { why: `${m.name}: its host is not reached by a trial template (\`ssh {host} sudo sh -s\`), so its data cannot be brought here` };
  const s = await r.running(m);
  if ('why' in s) return { why: `${m.name}: ${s.why}` };
  const can = capabilitiesOf(s);
  if (!can.etcdData) return { why: `${can.what} members keep no etcd data to rehearse on` };
  if (!s.pid || !s.exe) return { why: `${m.name}: its process's PID and binary could not be read from /proc on its host` };
  const tls = [...s.args, ...Object.keys(s.env), s.config?.text ?? ''].some((w) => TLS_WORDS.test(w)) || m.endpoint.startsWith('https:');
  if (tls && !r.copyKeys)
    return {
      why: `${m.name} runs with certificates, whose keys never leave its host unless you say so (--rehearsal-copy-keys brings them here for the clone, removed with it)`,
    };
  const dirs = await dataDirOf(s);
  if (!dirs) return { why: `${m.name}: its data dir cannot be read from ${s.config?.file ?? s.from.args}` };
  const abs = (p: string) => (isAbsolute(p) ? p : join(s.cwd ?? '/', p));
  const paths = new Set([dirs.dataDir, ...(dirs.walDir ? [dirs.walDir] : [])].map(abs));
  if (tls) for (const f of await keyFiles(s)) paths.add(abs(f));
  const running = configFileOf(s.args, s.env);
  if (running) paths.add(abs(running));
  const version = await runningMinor(m, r, s.exe);
  if (!version) return { why: `${m.name}: ${s.exe} --version printed no "etcd Version:" on its host` };
  // its settings on each later minor (the clone's starts), and the config files they name (copied too)
  const later = LADDER_MINORS.slice(LADDER_MINORS.indexOf(version) + 1);
  const settings: Record<string, AwaySettings> = {};
  const configs: Record<string, { file: string; text: string }> = {};
  for (const version of later) {
    const got = (await r.versionSettings?.(m, { version })) ?? { why: 'the settings template is not given' };
    settings[version] = 'why' in got ? { why: got.why } : { args: got.args, env: got.env, from: got.from, ...(got.cwd ? { cwd: got.cwd } : {}) };
    const file = 'why' in got ? undefined : configFileOf(got.args, got.env);
    if (file && !('why' in got)) paths.add(isAbsolute(file) ? file : join(got.cwd ?? s.cwd ?? '/', file));
    if (tls && !('why' in got)) for (const f of await keyFiles({ ...got, config: undefined })) paths.add(abs(f));
    const c = await r.readConfig?.(m, { version });
    if (c) configs[version] = c;
  }
  // the binaries the clone starts here: the one it runs now, and the hops' where the cluster file names them
  const missing = [s.exe, ...later.map((x) => r.hostBinary?.(x)).filter((b): b is string => Boolean(b))].filter((b) => !existsSync(b));
  if (missing.length)
    return {
      why: `${m.name}: the clone runs its members on this machine, and ${missing.join(', ')} (its binaries on its host) ${missing.length === 1 ? 'is' : 'are'} not here at the same path`,
    };
  const size = await r.shell(m, `du -sbc --exclude='[0-9]*.tmp' -- ${[...paths].map(shellWord).join(' ')} 2>/dev/null | tail -n 1\n`);
  const bytes = Number(size.stdout.trim().split(/\s/)[0]);
  if (!Number.isFinite(bytes) || size.failed)
    return { why: `${m.name}: the size of its data could not be read on its host${size.failed ? ` (${size.failed})` : ''}` };
  return {
    pid: s.pid,
    bytes,
    argv,
    member: {
      ...runningMember(m, version, { ...s, exe: s.exe }),
      dataDir: abs(dirs.dataDir),
      ...(dirs.walDir ? { walDir: abs(dirs.walDir) } : {}),
      fetched: [...paths],
      settings,
      ...(Object.keys(configs).length ? { configs } : {}),
    },
  };
}

/**
 * etcd's settings that name a certificate, key, CA or CRL file (flags; ETCD_* variables; in a config file,
 * under *-transport-security too): --cert-file and --peer-cert-file, their client-* forms (3.5: the member's own
 * client certificate, --client-cert-file, --peer-client-key-file), --trusted-ca-file, --client-crl-file and
 * --peer-crl-file (a CRL the clone's member would otherwise start without: refused, "no such file").
 */
const KEY_FILE = /^(?:peer-)?(?:client-)?(?:cert|key)-file$|^(?:peer-)?trusted-ca-file$|^(?:client-|peer-)?crl-file$/;

/** The certificate, key and CA files a member's settings name (--rehearsal-copy-keys: brought here with its data). */
async function keyFiles(s: Pick<StartSettings, 'args' | 'env'> & { config?: { text: string } | undefined }): Promise<string[]> {
  const out = new Set<string>();
  for (const f of flagWords(s.args)) if (KEY_FILE.test(f.key) && typeof f.value === 'string' && f.value) out.add(f.value);
  for (const [k, v] of Object.entries(s.env)) {
    const key = k
      .replace(/^ETCD_/, '')
      .toLowerCase()
      .replace(/_/g, '-');
    if (k.startsWith('ETCD_') && KEY_FILE.test(key) && v) out.add(v);
  }
  if (s.config) {
    const doc = (await parseYaml(s.config.text).catch(() => undefined)) as Record<string, unknown> | undefined;
    const visit = (o: unknown): void => {
      if (!o || typeof o !== 'object') return;
      for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
        if (typeof v === 'string' && v && KEY_FILE.test(k)) out.add(v);
        else if (k.endsWith('-transport-security')) visit(v);
      }
    };
    visit(doc);
  }
  return [...out];
}

/**
 * The simulated member's settings, read once: its flags, then the settings of the YAML file that
 * --config-file names. As etcd, the file holds the settings (real etcd then ignores every flag; here
 * the file's settings win over the flags, so a test may still pass only a few in the file).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
// static, not a top-level await: the single executable bundles this program as CommonJS (the sandbox
// always starts members from a config file, so yaml is loaded either way)
import { parse as parseYaml } from 'yaml';
import { textOf } from '@opsctl/shared/json.js';

export interface MemberArgs {
  name: string;
  dataDir: string;
  /** --kv-version ("3.2" … "3.7", or a full version such as "3.5.21"): a flag only, never read from the config file. */
  minorVersion: string;
  clientUrl: URL;
  peerUrl: URL;
  /** `name=peerURL,…`, as etcd's --initial-cluster (this member alone when not given). */
  initialCluster: string;
  token: string;
  heartbeatMs: number;
  /** As etcd: 10 heartbeats unless given. */
  electionMs: number;
  maxRequestBytes: number;
  configFile?: string;
  /** auto-compaction-retention as the config file wrote it (a number or a string; undefined when absent). */
  retention: unknown;
  /** Every setting of the config file as written (the version checks of 3.4 and later read them). */
  settings: Record<string, unknown>;
}

function readFlags() {
  return parseArgs({
    options: {
      name: { type: 'string' },
      'data-dir': { type: 'string' },
      'listen-client-urls': { type: 'string' },
      'listen-peer-urls': { type: 'string' },
      'initial-cluster': { type: 'string' },
      'initial-cluster-token': { type: 'string', default: 'kv-cluster' },
      'max-request-bytes': { type: 'string', default: String(1.5 * 1024 * 1024) },
      'config-file': { type: 'string' },
      'kv-version': { type: 'string', default: '3.2' },
      'heartbeat-interval': { type: 'string', default: '100' },
      'election-timeout': { type: 'string' },
    },
    strict: false,
  }).values;
}

/** The config file's settings (prototype-free); a file that does not load stops the member, as etcd. */
function readConfigFile(file: string): Record<string, unknown> {
  const settings: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    process.stderr.write(`etcdmain: error verifying flags, error loading config file "${file}": ${(err as Error).message}\n`);
    process.exit(1);
  }
  if (parsed && typeof parsed === 'object') Object.assign(settings, parsed);
  return settings;
}

/** The first of a comma-separated list of URLs. */
const firstUrl = (list: string) => new URL(list.split(',')[0] ?? list);

export function readArgs(): MemberArgs {
  const flags = readFlags();
  const configFile = textOf(flags['config-file']);
  const fileSettings: Record<string, unknown> = configFile ? readConfigFile(configFile) : {};
  const args: Record<string, unknown> = { ...flags, ...fileSettings };
  const name = textOf(args.name) ?? 'default';
  const clientUrl = firstUrl(textOf(args['listen-client-urls']) ?? 'http://127.0.0.1:2379');
  const peerUrl = firstUrl(textOf(args['listen-peer-urls']) ?? 'http://127.0.0.1:2380');
  const heartbeatMs = Number(args['heartbeat-interval']);
  return {
    name,
    dataDir: textOf(args['data-dir']) ?? `${name}.kv`,
    minorVersion: textOf(flags['kv-version']) ?? '3.2',
    clientUrl,
    peerUrl,
    initialCluster: textOf(args['initial-cluster']) ?? `${name}=${peerUrl.href}`,
    token: textOf(args['initial-cluster-token']) ?? 'kv-cluster',
    heartbeatMs,
    electionMs: Number(args['election-timeout'] ?? heartbeatMs * 10),
    maxRequestBytes: Number(args['max-request-bytes']),
    configFile,
    retention: fileSettings['auto-compaction-retention'],
    settings: fileSettings,
  };
}

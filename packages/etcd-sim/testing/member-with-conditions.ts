/**
 * The simulated member with conditions the tests set: a file CONDITIONS.json in the member's data dir
 * ({"neverHealthyOn":"3.3"}, {"corruptSnapshot":true}, {"alarm":"NOSPACE"}, {"muteHeartbeats":true} on
 * a leader: its pings stop naming it, {"downgradeLingers":true}: an enabled downgrade is not ended, …), read on each request and each heartbeat
 * ({"runsAs":…}: once, at its start). Built by the tests'
 * global setup (never by the product's build: no such file is read by what ships), and used through
 * OPSCTL_KV_MEMBER, as any other member program.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asObject } from '@opsctl/shared/json.js';
import { readArgs } from '../src/args.js';
import { setConditions, type Conditions } from '../src/conditions.js';

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function read(dataDir: string): Conditions {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dataDir, 'CONDITIONS.json'), 'utf8'));
  } catch {
    return {};
  }
  const f = asObject(raw);
  return {
    neverHealthyOn: text(f.neverHealthyOn),
    corruptSnapshot: f.corruptSnapshot === true,
    alarm: text(f.alarm),
    muteHeartbeats: f.muteHeartbeats === true,
    authEnabled: f.authEnabled === true,
    v2Bytes: num(f.v2Bytes),
    divergent: f.divergent === true,
    divergentOn: text(f.divergentOn),
    freeBytes: num(f.freeBytes),
    downgradeLingers: f.downgradeLingers === true,
    clusterVersionLags: f.clusterVersionLags === true,
    clusterVersionAt: text(f.clusterVersionAt),
  };
}

/**
 * {"runsAs":{"3.3":"3.2"}}, read once at its start: started as 3.3 (`--kv-version 3.3`, or any 3.3.x), the member
 * runs as 3.2, as a start command that starts the old binary would: it turns healthy at once and answers 3.2, so
 * a wait for it on 3.3 fails at once ("runs 3.2.32, not 3.3"), with no timeout to race a busy machine.
 */
function startedAs(dataDir: string): void {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dataDir, 'CONDITIONS.json'), 'utf8'));
  } catch {
    return;
  }
  const runsAs = asObject(asObject(raw).runsAs);
  const i = process.argv.indexOf('--kv-version');
  const asked = i > 0 ? process.argv[i + 1] : undefined;
  const as = asked ? text(runsAs[/^\d+\.\d+/.exec(asked)?.[0] ?? asked]) : undefined;
  if (as) process.argv[i + 1] = as;
}

const { dataDir } = readArgs();
setConditions(() => read(dataDir));
startedAs(dataDir);
// (a promise, not top-level await: the member program is bundled as CommonJS)
void import('../src/member.js');

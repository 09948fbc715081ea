/**
 * The simulated member with conditions the tests set: a file CONDITIONS.json in the member's data dir
 * ({"neverHealthyOn":"3.3"}, {"corruptSnapshot":true}, {"alarm":"NOSPACE"}, {"muteHeartbeats":true} on
 * a leader: its pings stop naming it, {"downgradeLingers":true}: an enabled downgrade is not ended, …), read on each request and each heartbeat. Built by the tests'
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
  };
}

const { dataDir } = readArgs();
setConditions(() => read(dataDir));
// (a promise, not top-level await: the member program is bundled as CommonJS)
void import('../src/member.js');

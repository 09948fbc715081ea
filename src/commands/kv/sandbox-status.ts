import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError } from '../../core/errors.js';
import { memberProcesses, readPid } from '../../kv/drivers/local.js';
import { observeCluster } from '../../kv/cluster/observe.js';
import { loadSandbox } from '../../kv/sandbox/sandbox.js';
import { openSession } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './sandbox-status.spec.js';

/** `kv sandbox status`: each member's PID, process, health and versions. */
export async function run(_opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const spec = loadSandbox(ctx.paths.data);
  if (!spec) throw new OpsError('no kv sandbox', 1, { code: 'no_sandbox', hint: 'start one with: opsctl kv sandbox up' });
  const obs = await observeCluster(spec.members, { session: openSession(ctx), timeoutMs: 1500 });
  const rows = spec.members.map((m) => {
    const live = memberProcesses(m).member;
    const pid = live[0]?.pid ?? readPid(m);
    const o = obs.members.find((x) => x.name === m.name)!;
    return {
      name: m.name,
      endpoint: m.endpoint,
      pid: pid ?? null,
      running: live.length > 0,
      healthy: o.healthy,
      server: o.serverVersion ?? null,
      cluster: o.clusterVersion ?? null,
      leader: Boolean(o.id && o.id === o.leaderId),
      dataDir: m.dataDir,
    };
  });
  return { data: rows, columns: ['name', 'endpoint', 'pid', 'running', 'healthy', 'server', 'cluster', 'leader'].map((key) => ({ key })) };
}

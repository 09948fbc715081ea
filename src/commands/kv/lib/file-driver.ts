/** The member driver a cluster file names, built for a verb (kv/drivers/entry.ts), the container driver loaded only for its files. */
import type { Context } from '../../../context.js';
import type { ClusterSpec } from '../../../kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../../kv/drivers/driver.js';
import { openDriver } from '../../../kv/drivers/entry.js';
import { sandboxProgramAt } from '../../../kv/sandbox/members.js';

/** `trace`: the container driver's engine calls said on the debug sink (the crash-point seam, kv/drivers/traced.ts). */
export async function fileDriver(
  ctx: Context,
  spec: ClusterSpec['driver'],
  { trace }: { trace?: (line: string) => void } = {},
): Promise<MemberDriver | undefined> {
  const exec = await ctx.exec();
  return openDriver(spec, {
    exec,
    env: ctx.env,
    programAt: sandboxProgramAt,
    container: async (s) => new (await import('../../../kv/containers/driver.js')).ContainerDriver(s, exec, ctx.env, trace),
    commandCloning: (self, given) => {
      // (loaded when the rehearsal asks)
      const cloning = () => import('../../../kv/rehearsal/command-clone.js').then((c) => c.commandCloning(self, given));
      return { look: async (members, how) => (await cloning()).look(members, how), inClone: async (dataDir) => (await cloning()).inClone(dataDir) };
    },
  });
}

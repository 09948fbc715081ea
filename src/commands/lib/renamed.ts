import type { Context } from '../../context.js';
import type { RunModule, VerbSpec } from '../spec.js';

/**
 * The old spelling of a renamed verb, kept so scripts written for it go on working: hidden from --help
 * and completion, the same flags and run, and one line on stderr naming the new spelling.
 */
export function renamedVerb<const S extends VerbSpec>(spec: S, oldName: string, oldPath: string, newPath: string): S {
  return {
    ...spec,
    name: oldName,
    hidden: true,
    load: async (): RunModule => {
      const mod = (await spec.load()) as { run(opts: never, ctx: Context): unknown };
      return {
        run: (opts: never, ctx: Context) => {
          ctx.io.warn(`\`opsctl ${oldPath}\` is now \`opsctl ${newPath}\`; the old name still works but will be removed in a later release`);
          return mod.run(opts, ctx);
        },
      } as Awaited<RunModule>;
    },
  };
}

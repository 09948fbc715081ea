import type { Rule } from './types.js';

/**
 * The rules whose findings are the proof before every stop (the hop's binary started with the
 * member's settings, and on a copy of its data): a member not proven refuses the run, whatever
 * --strict says, unless --skip-trial names it (with a reason, kept in the journal and the report).
 */
export const PROOF_RULES: ReadonlySet<string> = new Set(['trial-start', 'data-trial']);

/**
 * The hop's binary as the judge of each member's settings (src/kv/trial): one row per member, its
 * trial's verdict. Every hop's table has it, a patch hop's too: a list of rules written from the
 * guides trails them, the binary does not.
 */
export function trialRule(guide: string): Rule {
  return {
    id: 'trial-start',
    check:
      "the hop's etcd starts with each member's own settings (config file, flags, ETCD_* environment): one trial start on a scratch data dir and loopback ports",
    where: ['binary', 'config file', 'flags', 'systemd unit'],
    severity: 'refuse',
    fix: 'change that setting where the finding says it is set, then run the same command',
    guide,
    test: (f) => {
      // One row per member, always: a member's proof is its own (--skip-trial names members).
      const trials = f.trials;
      if (!trials || 'why' in trials)
        return f.members.map((m) => ({ member: m.name, result: 'not-checked' as const, detail: trials ? trials.why : 'no trial was run for this hop' }));
      return trials.map((t) => ({ member: t.member, result: t.result, detail: t.detail }));
    },
  };
}

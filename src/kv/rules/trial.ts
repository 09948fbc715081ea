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
      "the hop's etcd starts with each member's own settings (config file, flags, ETCD_* environment): its data trial's start on a copy of its data where that one got through it with the same settings, else one trial start on a scratch data dir and loopback ports",
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

/**
 * The hop's binary on a copy of each member's own data (db, WAL and snap files, copied without a stop,
 * started in a network namespace of its own): it must start and answer with the member's data. Data a
 * version cannot read (custom v2 entries in the WAL) is found here, before any stop, not after.
 */
export function dataTrialRule(guide: string): Rule {
  return {
    id: 'data-trial',
    check:
      "the hop's etcd starts on a copy of each member's own data (db, WAL, snap files; isolated from the cluster's network) and answers with it (the same KV hash)",
    where: ['binary', 'data dir'],
    severity: 'refuse',
    fix: "what etcd's words name in the member's data; then run the same command (the way back is untouched: nothing was stopped)",
    guide,
    test: (f) => {
      const found = f.dataTrials;
      if (!found || 'why' in found)
        return f.members.map((m) => ({ member: m.name, result: 'not-checked' as const, detail: found ? found.why : 'no data trial was run for this hop' }));
      return found.map((t) => ({ member: t.member, result: t.result, detail: t.detail }));
    },
  };
}

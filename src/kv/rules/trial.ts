import type { Rule } from './types.js';

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
      if (!f.trials) return [{ result: 'not-checked', detail: 'no trial was run for this hop' }];
      if ('why' in f.trials) return [{ result: 'not-checked', detail: f.trials.why }];
      return f.trials.map((t) => ({ member: t.member, result: t.result, detail: t.detail }));
    },
  };
}

import { isOn, settingRule, UNRECOGNIZED_ENV } from './settings.js';
import { trialRule } from './trial.js';
import type { Finding, Rule } from './types.js';

const GUIDE = 'https://etcd.io/docs/v3.4/upgrades/upgrade_3_4/';

/**
 * 3.3 → 3.4. Measured on Debian's etcd 3.4.23: `log-output: default` in a config file stops it at
 * start ("cannot unmarshal string into Go struct field configYAML.log-output of type []string");
 * `--ca-file` is "flag provided but not defined"; the v2 API answers 404 unless --enable-v2; a data
 * dir of mode 0755 is only warned about ("The recommended permission is -rwx------").
 */
export const HOP_34: Rule[] = [
  trialRule(GUIDE),
  settingRule({
    id: 'log-outputs',
    check: 'log-output became log-outputs, a list: a string in a config file stops 3.4 at start',
    keys: ['log-output'],
    severity: 'refuse',
    fix: 'write log-outputs: [default] (a list) in the config file, or --log-outputs=default as a flag, in place of log-output',
    guide: GUIDE,
    problem: (s) =>
      s.flag
        ? undefined // --log-output still starts 3.4 (deprecated; removed in 3.5, which the 3.5 table refuses)
        : `${s.from}: log-output: ${JSON.stringify(s.value)}: 3.4 reads log-outputs, a list, and refuses a string here`,
  }),
  settingRule({
    id: 'ca-file',
    check: '--ca-file and --peer-ca-file (deprecated since 2.1) are removed: 3.4 refuses the flags',
    keys: ['ca-file', 'peer-ca-file'],
    severity: 'refuse',
    fix: 'use --trusted-ca-file / --peer-trusted-ca-file (trusted-ca-file / peer-trusted-ca-file in the config file)',
    guide: GUIDE,
    // (a variable is ignored as the config file key is: measured, 3.4.23 starts without it, the CA not trusted)
    problem: (s) =>
      `${s.from}: ${s.key} is gone in 3.4 (${s.env ? `${UNRECOGNIZED_ENV}: the CA would not be trusted` : s.flag ? '"flag provided but not defined"' : 'ignored in the config file: the CA would not be trusted'})`,
  }),
  settingRule({
    id: 'enable-v2',
    check: '--enable-v2 defaults to false: the v2 API (/v2/keys, ETCDCTL_API=2) stops answering unless it is kept on',
    keys: ['enable-v2'],
    severity: 'warn',
    fix: 'move v2 clients to the v3 API first; to keep v2 for now set enable-v2: true (3.5 still reads it, 3.6 does not)',
    guide: GUIDE,
    where: ['config file', 'flags', "the member's API"],
    problem: (s) => (isOn(s.value) ? undefined : `${s.from}: enable-v2 ${JSON.stringify(s.value)}: the v2 API goes off on 3.4`),
    absent: (m, f) => ({
      member: m.name,
      result: 'problem',
      detail: `enable-v2 not set: the v2 API goes off on 3.4 (v2 clients get 404)${f.v2 && 'bytes' in f.v2 ? `; v2 data measured before the hop: ${f.v2.bytes} bytes (${f.v2.on})` : ''}`,
    }),
  }),
  {
    id: 'env-shadowed',
    check: 'no ETCD_* variable is shadowed by the same flag: 3.3 only warns ("shadowed by corresponding flag"), 3.4 refuses to start',
    where: ['flags', 'systemd unit'],
    severity: 'refuse',
    fix: 'set each setting once: unset the variable (Environment=/EnvironmentFile= of the unit) or drop the flag from the command line',
    guide: 'https://github.com/etcd-io/etcd/pull/9382',
    test: (f) =>
      f.members.map((m): Finding => {
        if (!m.settings)
          return {
            member: m.name,
            result: 'not-checked',
            detail: 'its flags and environment are not known (the trial reads them: a sandbox, or a trial template)',
          };
        if ('why' in m.settings) return { member: m.name, result: 'not-checked', detail: m.settings.why };
        // etcd reads neither flags nor variables beside a config file: nothing is shadowed then (measured on 3.4.23).
        if (m.settings.list.some((s) => !s.flag))
          return { member: m.name, result: 'ok', detail: 'it starts from a config file (etcd reads no variable beside one)' };
        const vars = m.settings.list.filter((s) => s.env);
        const clash = vars.filter((v) => m.settings && 'list' in m.settings && m.settings.list.some((s) => s.flag && !s.env && s.key === v.key));
        if (!clash.length)
          return { member: m.name, result: 'ok', detail: vars.length ? `${vars.length} ETCD_* variable(s), none also given as a flag` : 'no ETCD_* variable' };
        return {
          member: m.name,
          result: 'problem',
          detail: clash
            .map((v) => `${v.from} is shadowed by --${v.key}: 3.4 exits with "conflicting environment variable is shadowed by corresponding command-line flag"`)
            .join('; '),
        };
      }),
  },
  {
    id: 'data-dir-0700',
    check: 'the data dir is mode 0700 (3.4.10 and later warn at every start otherwise)',
    where: ['data dir'],
    severity: 'warn',
    fix: 'chmod 700 the data dir (as the user etcd runs as), before or after the hop',
    guide: 'https://github.com/etcd-io/etcd/blob/main/CHANGELOG/CHANGELOG-3.4.md#v3410-2020-07-16',
    test: (f) =>
      f.members.map((m) => {
        if (!m.dataDir) return { member: m.name, result: 'not-checked', detail: 'the driver does not know the data dir (give --data-dir with --on-host)' };
        if ('why' in m.dataDir) return { member: m.name, result: 'not-checked', detail: m.dataDir.why };
        const mode = (m.dataDir.mode & 0o777).toString(8).padStart(4, '0');
        return (m.dataDir.mode & 0o077) === 0
          ? { member: m.name, result: 'ok', detail: `${m.dataDir.dir} is ${mode}` }
          : { member: m.name, result: 'problem', detail: `${m.dataDir.dir} is ${mode}, not 0700` };
      }),
  },
  {
    id: 'gateway-v3',
    check: 'the JSON gateway moves to /v3 (/v3alpha is gone; /v3beta still answers)',
    where: ["the member's API"],
    severity: 'warn',
    fix: "point gateway clients at /v3 (opsctl asks each member on its own version's path)",
    guide: GUIDE,
    test: () => [{ result: 'ok', detail: "opsctl picks each member's gateway path by its version" }],
  },
];

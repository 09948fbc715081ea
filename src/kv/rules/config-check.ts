import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver, MemberTarget } from '../drivers/driver.js';
import { parseGoDuration } from '../../core/duration.js';
import { parseYamlDocument, yamlLib, YamlTextError } from '../../core/yaml.js';

/** One thing in a member's config file that 3.3 will not accept (or that its clients cannot honour). */
export interface ConfigProblem {
  member: string;
  file: string;
  line: number;
  problem: string;
  fix: string;
}

/** The send limit of a 3.3 client by default (the seed: client send size default 2 MiB). */
export const CLIENT_SEND_DEFAULT = 2 * 1024 * 1024;

/**
 * The seed's 3.3 interface changes, checked in one member's YAML config file (etcd --config-file):
 * auto-compaction-retention must be a string (3.2 read a number; 3.3 refuses to start), a periodic
 * retention must be hours or a duration and a revision one a count, and max-request-bytes must be
 * an integer the 3.3 clients can send (their default send limit is 2 MiB).
 */
export async function checkConfig(text: string, file: string, member: string): Promise<ConfigProblem[]> {
  const y = await yamlLib();
  const lc = new y.LineCounter();
  const out: ConfigProblem[] = [];
  let doc;
  try {
    doc = await parseYamlDocument(text, { lineCounter: lc });
  } catch (err) {
    if (!(err instanceof YamlTextError)) throw err;
    return [
      {
        member,
        file,
        line: err.linePos?.[0]?.line ?? 0,
        problem: `not valid YAML (${err.message})`,
        fix: 'fix the YAML: etcd reads this file with --config-file',
      },
    ];
  }
  const map = doc.contents;
  if (!y.isMap(map)) return out;
  const node = (key: string) => {
    const pair = map.items.find((p) => y.isScalar(p.key) && p.key.value === key);
    if (!pair || !y.isScalar(pair.value)) return undefined;
    const s = pair.value;
    return {
      value: s.value,
      quoted: s.type === 'QUOTE_DOUBLE' || s.type === 'QUOTE_SINGLE',
      line: s.range ? lc.linePos(s.range[0]).line : 0,
      source: String(s.source ?? s.value),
    };
  };
  const mode = node('auto-compaction-mode');
  const ret = node('auto-compaction-retention');
  if (ret && typeof ret.value === 'number') {
    out.push({
      member,
      file,
      line: ret.line,
      problem: `auto-compaction-retention is the number ${ret.source}: 3.3 reads a string and refuses to start`,
      // 3.2 reads the file's value as a number, so one file cannot suit both: the flag does.
      fix: `give the 3.3 member auto-compaction-retention: "${ret.source}" (hours) or "${ret.source}h" (its own config file, {version} in the start template), or drop the config file and give every setting as flags, --auto-compaction-retention=${ret.source} among them (3.2 and 3.3 both read the flag; etcd ignores every flag when started with --config-file)`,
    });
  } else if (ret && typeof ret.value === 'string' && ret.value !== '') {
    const v = ret.value;
    const periodic = !mode || mode.value === 'periodic';
    if (periodic && !/^\d+$/.test(v) && parseGoDuration(v) === undefined) {
      out.push({
        member,
        file,
        line: ret.line,
        problem: `auto-compaction-retention "${v}" is not a duration (periodic compaction)`,
        fix: 'write hours ("24") or a duration ("24h", "90m", "1h30m")',
      });
    } else if (!periodic && mode?.value === 'revision' && !/^\d+$/.test(v)) {
      out.push({
        member,
        file,
        line: ret.line,
        problem: `auto-compaction-retention "${v}" is not a revision count (auto-compaction-mode revision)`,
        fix: 'write a number of revisions as a string, e.g. "1000"',
      });
    }
  }
  if (mode && mode.value !== 'periodic' && mode.value !== 'revision') {
    out.push({
      member,
      file,
      line: mode.line,
      problem: `auto-compaction-mode "${mode.source}" is neither periodic nor revision`,
      fix: 'write auto-compaction-mode: periodic (or revision)',
    });
  }
  const mrb = node('max-request-bytes');
  if (mrb) {
    if (typeof mrb.value !== 'number' || !Number.isInteger(mrb.value) || mrb.value <= 0) {
      out.push({
        member,
        file,
        line: mrb.line,
        problem: `max-request-bytes "${mrb.source}" is not a whole number of bytes`,
        fix: 'write bytes as an integer, e.g. max-request-bytes: 1572864',
      });
    } else if (mrb.value > CLIENT_SEND_DEFAULT) {
      out.push({
        member,
        file,
        line: mrb.line,
        problem: `max-request-bytes ${mrb.value} is above what 3.3 clients send by default (${CLIENT_SEND_DEFAULT} bytes): requests between the two fail in the client, not the server`,
        fix: `lower it to ${CLIENT_SEND_DEFAULT} or less, or raise every client's send limit (clientv3 MaxCallSendMsgSize) first`,
      });
    }
  }
  return out;
}

/** Every member's config, as the driver reads it; members it cannot read are left out (noted). */
export async function checkClusterConfig(
  members: MemberSpec[],
  driver: MemberDriver | undefined,
  target: MemberTarget,
  note: (t: string) => void,
): Promise<ConfigProblem[]> {
  if (!driver?.readConfig) return [];
  const all = await Promise.all(
    members.map(async (m) => {
      const c = await driver.readConfig!(m, target);
      if (!c) return [];
      return checkConfig(c.text, c.file, m.name);
    }),
  );
  const problems = all.flat();
  if (!problems.length) note(`3.3 configuration check: ${members.length} member config files read, nothing 3.3 would refuse`);
  return problems;
}

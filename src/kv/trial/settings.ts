/** A member's start settings as the rules and the trial's verdict list them (drivers/start-settings.ts reads them). */
import type { Setting } from '../rules/types.js';
import { flagWords, envKey, type StartSettings } from '../drivers/start-settings.js';
import { parseYamlOrUndefined } from '../../core/yaml.js';

/**
 * The settings as the rules read them: each config file key, each flag and each ETCD_* variable,
 * with where it came from. A key set twice (a variable and a flag) is listed twice.
 */
export async function settingList(s: StartSettings): Promise<Setting[]> {
  const list: Setting[] = [];
  if (s.config) {
    // (the trial reports what etcd says of a file it cannot read)
    const parsed = await parseYamlOrUndefined(s.config.text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [key, value] of Object.entries(parsed as Record<string, unknown>))
        list.push({ key, value, from: `config file ${s.config.file}`, flag: false });
    }
  }
  for (const f of flagWords(s.args)) list.push({ key: f.key, value: f.value, from: `flag --${f.key} in ${s.from.args}`, flag: true });
  for (const [name, value] of Object.entries(s.env)) {
    const key = envKey(name);
    if (key) list.push({ key, value, from: `environment ${name} in ${s.from.env}`, flag: true, env: true });
  }
  return list;
}

/** A setting's value as a message may show it: secrets (passwords, tokens) never. */
export function shownValue(key: string, value: unknown): string {
  if (/password|token|secret/i.test(key)) return '(hidden)';
  return JSON.stringify(value);
}

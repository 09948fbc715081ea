import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_CHANGES, clientChecklist, STAGING_ADVICE } from '../../src/kv/rules/clients.js';

const flat = (s: string) => s.replace(/\s+/g, ' ');

describe("each hop's client checklist", () => {
  it('a hop lists the changes of every minor it passes, after the staging advice; a same-version run none', () => {
    const two = clientChecklist('3.2', '3.4');
    expect(two[0]).toContain(STAGING_ADVICE);
    expect(two.filter((l) => l.startsWith('    - 3.3:'))).toHaveLength(CLIENT_CHANGES.get('3.3')!.length);
    expect(two.filter((l) => l.startsWith('    - 3.4:'))).toHaveLength(CLIENT_CHANGES.get('3.4')!.length);
    expect(two.some((l) => l.includes('- 3.5:'))).toBe(false);
    expect(clientChecklist('3.5', '3.5')).toEqual([]);
  });

  it('the kv guide lists every change, word for word', () => {
    const guide = flat(readFileSync(new URL('../../docs/kv-upgrade.md', import.meta.url), 'utf8'));
    for (const list of CLIENT_CHANGES.values()) for (const c of list) expect(guide).toContain(flat(c));
  });
});

import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DOWNGRADE_FROM, DOWNGRADE_TO, LADDER, LADDER_MINORS, LADDER_TARGETS, LADDER_TOP } from '@opsctl/shared/etcd-ladder.js';
import { SIM_MINORS, SIM_RELEASES } from '@opsctl/etcd-sim/releases.js';
import { RULEBOOK } from '../../src/kv/rules/index.js';
import { CLIENT_CHANGES } from '../../src/kv/rules/clients.js';
import { planLadder } from '../../src/kv/ladder/plan.js';
import { compareVersion } from '../../src/kv/cluster/parse.js';
import { tsFiles } from '../helpers/ts-files.js';

const REPO = join(import.meta.dirname, '..', '..');
const pinned = JSON.parse(readFileSync(join(REPO, 'scripts', 'etcd-versions.json'), 'utf8')) as Record<string, string>;

const isMinor = (s: string) => /^3\.\d+$/.test(s);

describe("the ladder's one table (@opsctl/shared/etcd-ladder): a new minor is a row plus its rulebook", () => {
  it('every minor above the first has its rulebook, and every rulebook its row; the sim and the client notes follow the same rows', () => {
    expect(LADDER_MINORS).toEqual(['3.2', '3.3', '3.4', '3.5', '3.6', '3.7']);
    expect(Object.keys(RULEBOOK)).toEqual(LADDER_TARGETS);
    expect([...CLIENT_CHANGES.keys()]).toEqual(LADDER_TARGETS);
    expect(SIM_MINORS).toEqual(LADDER_MINORS);
    for (const r of LADDER.slice(1)) expect(r.guide, r.minor).toMatch(new RegExp(`^https://etcd\\.io/docs/v${r.minor}/upgrades/`));
    expect(DOWNGRADE_FROM).toEqual(['3.6', '3.7']);
    expect(DOWNGRADE_TO).toEqual(['3.5', '3.6']);
  });

  it("each floor is a release of the minor before, its hop's rulebook checks it, the planner plans the patch hop, and the pinned and simulated releases meet it", () => {
    const floors = LADDER.filter((r) => r.floor);
    expect(floors.map((r) => `${r.minor}:${r.floor!.version}`)).toEqual(['3.6:3.5.32', '3.7:3.6.11']);
    for (const r of floors) {
      const below = LADDER_MINORS[LADDER_MINORS.indexOf(r.minor) - 1]!;
      expect(r.floor!.version.startsWith(`${below}.`), r.minor).toBe(true);
      expect(RULEBOOK[r.minor]!.map((x) => x.id)).toContain(`from-${r.floor!.version}`);
      expect(compareVersion(pinned[below]!, r.floor!.version), `scripts/etcd-versions.json ${below}`).toBeGreaterThanOrEqual(0);
      expect(compareVersion(SIM_RELEASES[below]!, r.floor!.version), `simulated ${below}`).toBeGreaterThanOrEqual(0);
      const [maj, min, patch] = r.floor!.version.split('.').map(Number) as [number, number, number];
      const under = `${maj}.${min}.${patch - 1}`;
      const obs = {
        members: [under, r.floor!.version].map((v, i) => ({
          name: `kv${i}`,
          id: String(i),
          endpoint: `http://127.0.0.1:${2379 + i}`,
          reachable: true,
          healthy: true,
          healthDetail: 'healthy',
          serverVersion: v,
          clusterVersion: `${below}.0`,
        })),
        alarms: [],
      };
      const plan = planLadder(obs, LADDER_TOP);
      expect(plan.ok && plan.hops[0], `${under} before ${r.minor}`).toEqual({ from: below, to: below, patch: true });
    }
  });

  it('src/ holds no other list of minors: no array of minor strings, no ladder written out in a string (the table is read instead)', () => {
    const found: string[] = [];
    for (const file of tsFiles(join(REPO, 'src'))) {
      const rel = relative(REPO, file);
      const text = readFileSync(file, 'utf8');
      // (only a file whose text has a quoted minor or a ladder written out is parsed, to tell code from comments)
      if (!/['"`]3\.\d+['"`]|\b3\.\d+ (?:→ 3\.\d+ →|to 3\.\d+\b|… 3\.\d+)/.test(text)) continue;
      const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
      const at = (n: ts.Node) => `${rel}:${src.getLineAndCharacterOfPosition(n.getStart(src)).line + 1}`;
      const walk = (n: ts.Node) => {
        // ['3.3', '3.4', …]
        if (ts.isArrayLiteralExpression(n) && n.elements.filter((e) => ts.isStringLiteralLike(e) && isMinor(e.text)).length >= 2)
          found.push(`${at(n)}: an array of minors`);
        // { '3.5': x, '3.6': y } — only the rulebook (a row's rules, by its minor) may key by minor
        if (ts.isObjectLiteralExpression(n) && !rel.endsWith(join('kv', 'rules', 'index.ts'))) {
          const keys = n.properties.filter((p) => p.name && ts.isStringLiteralLike(p.name) && isMinor(p.name.text));
          if (keys.length >= 2) found.push(`${at(n)}: an object keyed by minors`);
        }
        // "3.2 → 3.3 → 3.4", "3.3 to 3.6", "3.2 … 3.6": a ladder or a span of it written out in code (comments are not code)
        if (
          (ts.isStringLiteralLike(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) &&
          /\b3\.\d+ (?:→ 3\.\d+ →|to 3\.\d+\b|… 3\.\d+)/.test(n.text)
        )
          found.push(`${at(n)}: ${JSON.stringify(n.text.slice(0, 80))}`);
        n.forEachChild(walk);
      };
      walk(src);
    }
    expect(found).toEqual([]);
  });
});

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the generated reference and man pages (one source: the command tree)', () => {
  it('docs/reference.md matches the command tree (run npm run docs)', async () => {
    const r = await runCli(['help', 'reference']);
    expect(r.code).toBe(0);
    expect(readFileSync(`${root}/docs/reference.md`, 'utf8'), 'docs/reference.md is stale: run npm run docs').toBe(`${r.stdout.trimEnd()}\n`);
  });

  it('man/ holds exactly one current page per command (run npm run docs)', async () => {
    const r = await runCli(['help', 'man', '--json']);
    expect(r.code).toBe(0);
    const pages = JSON.parse(r.stdout) as Array<{ name: string; text: string }>;
    expect(readdirSync(`${root}/man`).sort(), 'man/ is stale: run npm run docs').toEqual(pages.map((p) => p.name).sort());
    for (const p of pages) expect(readFileSync(`${root}/man/${p.name}`, 'utf8'), `man/${p.name} is stale: run npm run docs`).toBe(p.text);
  });

  it('every command, flag and example of the tree is in the reference: kv upgrade as a sample', () => {
    const md = readFileSync(`${root}/docs/reference.md`, 'utf8');
    const kv = md.slice(md.indexOf('## opsctl kv upgrade\n'), md.indexOf('\n## ', md.indexOf('## opsctl kv upgrade\n') + 5));
    for (const flag of ['--to', '--dry-run', '--on-failure', '--target-bin', '--report']) expect(kv).toContain(`\`${flag}`);
    expect(kv).toMatch(/Examples:[\s\S]*\$ opsctl kv upgrade/);
  });

  it.runIf(requireProgram('man (Debian: man-db)', '/usr/bin/man'))('man renders a page without warnings (man -l)', () => {
    const out = execFileSync('man', ['-l', '--warnings', `${root}/man/opsctl-kv-upgrade.1`], {
      encoding: 'utf8',
      env: { ...process.env, MANWIDTH: '100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(out).toMatch(/OPSCTL-KV-UPGRADE\(1\)[\s\S]*--on-failure/);
  });
});

// Regenerates docs/reference.md and man/*.1 from the command tree (npm run docs). A test fails when they are stale.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';

const opsctl = (...args) => execFileSync(process.execPath, ['bin/opsctl.cjs', ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

writeFileSync('docs/reference.md', `${opsctl('help', 'reference').trimEnd()}\n`);
console.log('wrote docs/reference.md');

const pages = JSON.parse(opsctl('help', 'man', '--json'));
mkdirSync('man', { recursive: true });
for (const old of readdirSync('man')) if (old.endsWith('.1')) rmSync(`man/${old}`);
for (const { name, text } of pages) writeFileSync(`man/${name}`, text);
console.log(`wrote ${pages.length} man pages into man/`);

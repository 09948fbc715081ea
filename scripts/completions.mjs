// Regenerates completions/ from the command tree (npm run completions). A test fails when they are stale.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const files = { bash: 'completions/opsctl.bash', zsh: 'completions/_opsctl', fish: 'completions/opsctl.fish' };
for (const [shell, file] of Object.entries(files)) {
  const script = execFileSync(process.execPath, ['bin/opsctl.cjs', 'completion', shell], { encoding: 'utf8' });
  writeFileSync(file, script);
  console.log(`wrote ${file}`);
}

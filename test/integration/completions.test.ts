import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const FILES = { bash: 'completions/opsctl.bash', zsh: 'completions/_opsctl', fish: 'completions/opsctl.fish' } as const;

describe('shell completions', () => {
  it.each(Object.entries(FILES))('the committed %s completion matches the command tree (run npm run completions)', async (shell, file) => {
    const r = await runCli(['completion', shell]);
    expect(r.code).toBe(0);
    expect(readFileSync(`${root}/${file}`, 'utf8'), `${file} is stale: run npm run completions`).toBe(r.stdout);
  });

  it('bash completes nouns, verbs, flags and flag values', () => {
    const complete = (line: string) => {
      const words = line.split(' ');
      const script = `source ${root}/${FILES.bash}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _opsctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).trim().split('\n');
    };
    expect(complete('opsctl tr')).toEqual(['tracker']);
    expect(complete('opsctl tracker labels ')).toEqual(expect.arrayContaining(['list', 'get', 'create', 'update', 'delete']));
    expect(complete('opsctl tracker labels create --c')).toEqual(['--color']);
    expect(complete('opsctl completion b')).toEqual(['bash']);
    expect(complete('opsctl auth login --service ')).toEqual(['tracker']);
  });
});

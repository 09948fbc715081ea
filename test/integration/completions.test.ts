import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PROFILE_LISTER } from '../../src/completion/tree.js';
import { resolvePaths } from '../../src/config/paths.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';

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
    expect(complete('opsctl auth store-token --service ')).toEqual(['tracker', 'oauth']);
  });

  /**
   * bash's own completion machinery, driven as readline drives it: COMP_WORDS holds the words as
   * typed (quotes included), the generated function fills COMPREPLY; one candidate per line.
   */
  const bash = (words: string[], env: NodeJS.ProcessEnv = {}, cwd = root) => {
    const script = `source ${root}/${FILES.bash}; COMP_WORDS=(${words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _opsctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const out = execFileSync('bash', ['-c', script], { encoding: 'utf8', cwd, env: { ...process.env, ...env } });
    return out.split('\n').filter(Boolean);
  };
  const dirs: Array<{ cleanup(): void }> = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it('bash offers a multi-word choice as one quoted candidate, never split into words', () => {
    expect(bash(['opsctl', 'tracker', 'epics', 'create', '--state', ''])).toEqual(["'in progress'", "'to do'", 'done']); // the document's order (CreateEpic.state)
    expect(bash(['opsctl', 'tracker', 'epics', 'create', '--state', 'i'])).toEqual(["'in progress'"]);
    expect(bash(['opsctl', 'tracker', 'epics', 'health-set', '1', '--status', 'O'])).toEqual(["'On Track'", "'Off Track'"]);
    // inside a quote the user opened, the bare choice (the shell closes the quote)
    expect(bash(['opsctl', 'tracker', 'epics', 'create', '--state', '"in'])).toEqual(['in progress']);
    expect(bash(['opsctl', 'tracker', 'epics', 'update', '--state', "'to"])).toEqual(['to do']);
    // an escaped space typed so far still matches
    expect(bash(['opsctl', 'tracker', 'epics', 'create', '--state', 'in\\ p'])).toEqual(["'in progress'"]);
  });

  it('bash completes file names after -f/--file (not after api -f, which is a field) and for file arguments', () => {
    const d = tempConfigDir('opsctl-compl-');
    dirs.push(d);
    writeFileSync(join(d.dir, 'labels one.yaml'), '');
    writeFileSync(join(d.dir, 'labels.json'), '');
    mkdirSync(join(d.dir, 'bin dir'));
    expect(bash(['opsctl', 'tracker', 'labels', 'apply', '-f', 'lab'], {}, d.dir).sort()).toEqual(['labels one.yaml', 'labels.json']);
    expect(bash(['opsctl', 'labels', 'apply', '--file', 'labels.'], {}, d.dir)).toEqual(['labels.json']);
    expect(bash(['opsctl', 'tracker', 'files', 'upload', 'labels'], {}, d.dir).sort()).toEqual(['labels one.yaml', 'labels.json']);
    expect(bash(['opsctl', 'kv', 'sandbox', 'up', '--etcd-bin', ''], {}, d.dir)).toEqual(['bin dir']);
    expect(bash(['opsctl', 'api', '-f', 'lab'], {}, d.dir)).toEqual([]);
  });

  it('bash completes --profile with the configured profile names (and embedded)', () => {
    const d = tempConfigDir('opsctl-compl-');
    dirs.push(d);
    writeFileSync(
      join(d.dir, 'config.json'),
      JSON.stringify({ profile: 'work', profiles: { work: { tracker: 'https://t.example' }, 'staging-2': {} } }, null, '\t'),
    );
    const env = { OPSCTL_CONFIG_DIR: d.dir };
    expect(bash(['opsctl', 'tracker', 'labels', 'list', '--profile', ''], env)).toEqual(['embedded', 'work', 'staging-2']);
    expect(bash(['opsctl', '--profile', 'st'], env)).toEqual(['staging-2']);
    // no config yet: only the embedded profile
    expect(bash(['opsctl', '--profile', ''], { OPSCTL_CONFIG_DIR: join(d.dir, 'none') })).toEqual(['embedded']);
  });

  it("the profile lister reads the same config.json as opsctl (env-paths' directory when OPSCTL_CONFIG_DIR is unset)", () => {
    const d = tempConfigDir('opsctl-compl-');
    dirs.push(d);
    // env-paths reads XDG_CONFIG_HOME from process.env when asked (and the home directory once)
    const saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = join(d.dir, 'xdg');
    let dir: string;
    try {
      dir = resolvePaths({}).config;
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
    expect(dir.startsWith(join(d.dir, 'xdg'))).toBe(process.platform === 'linux');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { prod: {} } }));
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(d.dir, 'xdg') };
    delete env.OPSCTL_CONFIG_DIR;
    expect(execFileSync(process.execPath, ['-e', PROFILE_LISTER], { encoding: 'utf8', env }).trim().split('\n')).toEqual(['embedded', 'prod']);
  });

  it('zsh and fish keep multi-word choices whole and complete files and profiles', async () => {
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    expect(zsh).toContain("'tracker epics create|--state') compadd -- 'in progress' 'to do' 'done'; return ;;");
    expect(zsh).toContain("'tracker labels apply|-f') _files; return ;;");
    expect(zsh).toContain("*'|--profile') compadd --");
    expect(zsh).not.toMatch(/local path=/); // zsh's $path is PATH
    const fish = (await runCli(['completion', 'fish'])).stdout;
    expect(fish).toContain(`-l 'state' -r -a '"in progress" "to do" done'`);
    expect(fish).toMatch(/-l 'file' -s f -r -F/);
    expect(fish).toContain("-l 'profile' -r -a '(__opsctl_profiles)'");
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireProgram } from '../helpers/e2e.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * The committed bash completion in an interactive bash on a real terminal: keys are typed (Tab
 * included), readline completes, Enter runs the line. `opsctl` is a shell function here that prints
 * each argument it got in <…>, so the test sees the words the command would receive.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const hasTools = requireProgram('script (util-linux, for the pty tests)', SCRIPT) && requireProgram('bash', '/bin/bash');

describe.runIf(hasTools)('bash completion on a real terminal', () => {
  let dir: string;
  let sh: PtySession;
  let n = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opsctl-compl-pty-'));
    writeFileSync(join(dir, 'labels file.yaml'), '');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { 'work-eu': {} } }));
    sh = PtySession.run(['/bin/bash', '--norc', '--noprofile', '-i'], {
      cwd: dir,
      env: { PS1: '$ ', INPUTRC: '/dev/null', HISTFILE: '/dev/null', OPSCTL_CONFIG_DIR: dir },
    });
    sh.type(`source ${root}/completions/opsctl.bash; opsctl() { printf '<%s>' "$@"; echo; }; echo READY-$((6*7))\r`);
    await sh.waitFor('READY-42');
  });
  afterAll(() => {
    sh?.type('exit\r');
    sh?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Types `keys` (with Tabs), then Enter, and returns the arguments the command received. */
  async function complete(keys: string): Promise<string> {
    const mark = `RUN-${++n}`;
    sh.type(`${keys}\r`);
    sh.type(`echo ${mark}-$((1+1))\r`);
    await sh.waitFor(`${mark}-2`);
    const text = sh.text;
    const end = text.lastIndexOf(`${mark}-2`);
    const line = text
      .slice(0, end)
      .split('\n')
      .map((l) => l.replace(/^\r+/, ''))
      .filter((l) => l.startsWith('<'));
    return line[line.length - 1] ?? '';
  }

  it('a multi-word choice completes to one argument, quoted or inside a quote the user opened', async () => {
    expect(await complete('opsctl tracker epics create --state i\t')).toBe('<tracker><epics><create><--state><in progress>');
    expect(await complete('opsctl tracker epics create --state "t\t')).toBe('<tracker><epics><create><--state><to do>');
    expect(await complete('opsctl tracker epics health-set 1 --status Of\t')).toBe('<tracker><epics><health-set><1><--status><Off Track>');
  }, 60_000);

  it('a value opsctl cannot list (kv upgrade --healthy-timeout, stories move --state) gets no flag names', async () => {
    expect(await complete('opsctl kv upgrade --healthy-timeout \t90s')).toBe('<kv><upgrade><--healthy-timeout><90s>');
    expect(await complete('opsctl tracker stories move 6 --state \tDone')).toBe('<tracker><stories><move><6><--state><Done>');
    // a suggested value (the ladder's targets) completes, though commander does not enforce it
    expect(await complete('opsctl kv upgrade --to 3.5\t')).toBe('<kv><upgrade><--to><3.5>');
  }, 60_000);

  it('-f completes a file name with a space as one argument; --profile completes a configured profile', async () => {
    expect(await complete('opsctl tracker labels apply -f lab\t')).toBe('<tracker><labels><apply><-f><labels file.yaml>');
    expect(await complete('opsctl tracker labels list --profile wo\t')).toBe('<tracker><labels><list><--profile><work-eu>');
  }, 60_000);
});

/**
 * The same completions in zsh and fish, each in its own interactive shell on a real terminal. A value
 * opsctl cannot list (`kv upgrade --healthy-timeout`) is never completed to a flag name; a fixed choice completes.
 */
const SHELL_SETUPS = {
  zsh: {
    argv: ['/usr/bin/zsh', '-f', '-i'],
    init: `autoload -Uz compinit && compinit -u -D; source ${root}/completions/_opsctl; opsctl() { printf '<%s>' "$@"; echo; }; PS1='$ '; echo READY-$((6*7))\r`,
    two: '$((1+1))',
  },
  fish: {
    argv: ['/usr/bin/fish', '--no-config', '-i'],
    init: `source ${root}/completions/opsctl.fish; function opsctl; printf '<%s>' $argv; echo; end; set fish_autosuggestion_enabled 0; echo READY-(math 6 '*' 7)\r`,
    two: '(math 1 + 1)',
  },
} as const;

for (const [shell, setup] of Object.entries(SHELL_SETUPS)) {
  describe.runIf(requireProgram('script (util-linux, for the pty tests)', SCRIPT) && requireProgram(shell, setup.argv[0]))(
    `${shell} completion on a real terminal`,
    () => {
      let dir: string;
      let sh: PtySession;
      let n = 0;
      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), `opsctl-compl-${shell}-`));
        sh = PtySession.run([...setup.argv], { cwd: dir, env: { HOME: dir, OPSCTL_CONFIG_DIR: dir, HISTFILE: '/dev/null', fish_history: '' } });
        sh.type(setup.init);
        await sh.waitFor('READY-42');
      }, 120_000);
      afterAll(() => {
        sh?.type('exit\r');
        sh?.kill();
        rmSync(dir, { recursive: true, force: true });
      });

      async function complete(keys: string): Promise<string> {
        const mark = `RUN-${++n}`;
        sh.type(`${keys}\r`);
        // the marker is computed by the shell, so its echo of the typed line never matches
        sh.type(`echo ${mark}-${setup.two}\r`);
        await sh.waitFor(`${mark}-2`);
        const text = sh.text;
        const lines = text
          .slice(0, text.lastIndexOf(`${mark}-2`))
          .split('\n')
          .map((l) => l.replace(/^\r+/, '').trim())
          // fish leaves a charset switch (ESC ( B) before its output: what follows the last < is the line
          .map((l) => l.slice(Math.max(0, l.indexOf('<'))))
          .filter((l) => l.startsWith('<'));
        return lines[lines.length - 1] ?? '';
      }

      it('a free value (kv upgrade --healthy-timeout) gets no flag name; a suggested and a fixed choice complete', async () => {
        expect(await complete('opsctl kv upgrade --healthy-timeout \t90s')).toBe('<kv><upgrade><--healthy-timeout><90s>');
        expect(await complete('opsctl kv upgrade --to 3.5\t')).toBe('<kv><upgrade><--to><3.5>');
        expect(await complete('opsctl completion fi\t')).toBe('<completion><fish>');
      }, 120_000);
    },
  );
}

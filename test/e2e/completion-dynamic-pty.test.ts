import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { requireProgram } from '../helpers/e2e.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * Opt-in dynamic completion (issue 26, item 2), as gh does with `__complete`: in bash, zsh and fish on
 * a real terminal, `--state In<Tab>` completes to the tracker's "In Progress" and `--epic-id Bi<Tab>`
 * to an epic's name only once OPSCTL_COMPLETE_DYNAMIC=1 is set (or the script came from
 * `completion bash --dynamic`); off, or with the service down, nothing is offered and nothing printed.
 * `opsctl` is a shell function printing its arguments; the scripts reach the real binary with
 * `command opsctl` (a wrapper on PATH).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

const SHELLS = {
  bash: {
    argv: ['/bin/bash', '--norc', '--noprofile', '-i'],
    init: `source ${root}/completions/opsctl.bash; opsctl() { printf '<%s>' "$@"; echo; }; echo READY-$((6*7))\r`,
    two: '$((1+1))',
    on: 'export OPSCTL_COMPLETE_DYNAMIC=1',
    down: 'export OPSCTL_TRACKER_URL=http://127.0.0.1:9',
    up: 'unset OPSCTL_TRACKER_URL',
  },
  zsh: {
    argv: ['/usr/bin/zsh', '-f', '-i'],
    init: `autoload -Uz compinit && compinit -u -D; source ${root}/completions/_opsctl; opsctl() { printf '<%s>' "$@"; echo; }; PS1='$ '; echo READY-$((6*7))\r`,
    two: '$((1+1))',
    on: 'export OPSCTL_COMPLETE_DYNAMIC=1',
    down: 'export OPSCTL_TRACKER_URL=http://127.0.0.1:9',
    up: 'unset OPSCTL_TRACKER_URL',
  },
  fish: {
    argv: ['/usr/bin/fish', '--no-config', '-i'],
    init: `source ${root}/completions/opsctl.fish; function opsctl; printf '<%s>' $argv; echo; end; set fish_autosuggestion_enabled 0; echo READY-(math 6 '*' 7)\r`,
    two: '(math 1 + 1)',
    on: 'set -gx OPSCTL_COMPLETE_DYNAMIC 1',
    down: 'set -gx OPSCTL_TRACKER_URL http://127.0.0.1:9',
    up: 'set -e OPSCTL_TRACKER_URL',
  },
} as const;

for (const [shell, setup] of Object.entries(SHELLS)) {
  describe.runIf(requireProgram('script (util-linux, for the pty tests)', SCRIPT) && requireProgram(shell, setup.argv[0]))(
    `${shell}: dynamic completion on a real terminal`,
    () => {
      let dir: string;
      let sh: PtySession;
      let n = 0;
      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), `opsctl-dyn-${shell}-`));
        mkdirSync(join(dir, 'bin'));
        writeFileSync(join(dir, 'bin', 'opsctl'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
        chmodSync(join(dir, 'bin', 'opsctl'), 0o755);
        // the embedded mock's state lives under OPSCTL_CONFIG_DIR: an epic to complete
        const epic = await runBin(['tracker', 'epics', 'create', '--name', 'Big Launch'], { env: { OPSCTL_CONFIG_DIR: dir } });
        expect(epic.exitCode, String(epic.stderr)).toBe(0);
        sh = PtySession.run([...setup.argv], {
          cwd: dir,
          env: {
            HOME: dir,
            PS1: '$ ',
            INPUTRC: '/dev/null',
            OPSCTL_CONFIG_DIR: dir,
            HISTFILE: '/dev/null',
            fish_history: '',
            PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
            // the service is asked on a busy machine: a generous limit here (the default is 2 s)
            OPSCTL_COMPLETE_TIMEOUT_MS: '120000',
            OPSCTL_COMPLETE_DYNAMIC: undefined,
          },
        });
        sh.type(setup.init);
        await sh.waitFor('READY-42');
      }, 180_000);
      afterAll(() => {
        sh?.type('exit\r');
        sh?.kill();
        rmSync(dir, { recursive: true, force: true });
      });

      /** Types `keys` (with Tabs), then Enter; the arguments the command received, and what the terminal showed meanwhile. */
      async function complete(keys: string): Promise<{ line: string; shown: string }> {
        const mark = `RUN-${++n}`;
        const from = sh.text.length;
        sh.type(`${keys}\r`);
        sh.type(`echo ${mark}-${setup.two}\r`);
        await sh.waitFor(`${mark}-2`, 180_000);
        const text = sh.text;
        const shown = text.slice(from, text.lastIndexOf(`${mark}-2`));
        const lines = shown
          .split('\n')
          .map((l) => l.replace(/^\r+/, '').trim())
          .map((l) => l.slice(Math.max(0, l.indexOf('<'))))
          .filter((l) => l.startsWith('<'));
        return { line: lines[lines.length - 1] ?? '', shown };
      }

      it('off by default: no names, no flag names; on: states and epics by name (one word with its space); the service down: nothing printed', async () => {
        expect((await complete('opsctl tracker stories move 6 --state In\t')).line).toBe('<tracker><stories><move><6><--state><In>');
        sh.type(`${setup.on}\r`);
        expect((await complete('opsctl tracker stories move 6 --state In\t')).line).toBe('<tracker><stories><move><6><--state><In Progress>');
        expect((await complete('opsctl tracker stories update 6 --epic-id Bi\t')).line).toBe('<tracker><stories><update><6><--epic-id><Big Launch>');
        // a static choice still completes without asking anyone
        expect((await complete('opsctl kv upgrade --to 3.5\t')).line).toBe('<kv><upgrade><--to><3.5>');
        sh.type(`${setup.down}\r`);
        const down = await complete('opsctl tracker stories move 6 --state In\t');
        expect(down.line).toBe('<tracker><stories><move><6><--state><In>');
        expect(down.shown).not.toMatch(/refused|ECONNREFUSED|HTTP|unexpected|X tracker|embedded mock/);
        sh.type(`${setup.up}\r`);
      }, 600_000);
    },
  );
}

describe.runIf(requireProgram('script (util-linux, for the pty tests)', SCRIPT) && requireProgram('bash', '/bin/bash'))(
  'opsctl completion bash --dynamic',
  () => {
    it('turns dynamic completion on without the environment variable', async () => {
      const r = await runBin(['completion', 'bash', '--dynamic']);
      expect(r.exitCode).toBe(0);
      expect(String(r.stdout)).toContain('\n_opsctl_dynamic_on=1\n');
      const plain = await runBin(['completion', 'bash']);
      expect(String(plain.stdout)).not.toContain('_opsctl_dynamic_on=1');
      const hidden = await runBin(['--help']);
      expect(String(hidden.stdout)).not.toContain('__complete');
    }, 120_000);
  },
);

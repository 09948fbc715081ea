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

  it('-f completes a file name with a space as one argument; --profile completes a configured profile', async () => {
    expect(await complete('opsctl tracker labels apply -f lab\t')).toBe('<tracker><labels><apply><-f><labels file.yaml>');
    expect(await complete('opsctl tracker labels list --profile wo\t')).toBe('<tracker><labels><list><--profile><work-eu>');
  }, 60_000);
});

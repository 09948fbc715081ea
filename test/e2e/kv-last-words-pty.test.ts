import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { requireProgram } from '../helpers/e2e.js';
import { until } from '../helpers/kv.js';
import { startCluster, type KvSandbox } from '../framework/index.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * Ctrl-C that lands while a member is down (issue 44 item 5), where a person does it: the built binary
 * on a real terminal, its output piped to `tee` (which the same Ctrl-C kills: the pipe closes under
 * opsctl), then a second Ctrl-C to quit at once. The member's start is held (the kvctl HOLD-START knob,
 * a slow package start) so the keys land while it is down; every wait is for a state, with a deadline.
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s', '--settle', '0s'];
const KVCTL = new URL('../fixtures/kvctl.mjs', import.meta.url).pathname;
const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
// the start in a session of its own (setsid -w), as a start the terminal's Ctrl-C does not reach
const DRIVER = ['--stop-cmd', tpl('stop'), '--start-cmd', `setsid -w ${tpl('start', ' {version}')}`, '--running-cmd', tpl('running'), '--no-backup'];
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

let sb: KvSandbox | undefined;
const sessions: PtySession[] = [];
/** Ends the held start (kvctl waiting on HOLD-START), which outlives the opsctl that ran it. */
function endHeldStart(dir: string): void {
  const file = join(dir, 'HELD.pid');
  if (!existsSync(file)) return;
  try {
    process.kill(Number(readFileSync(file, 'utf8')), 'SIGKILL');
  } catch {
    // already gone
  }
  rmSync(file, { force: true });
}

afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  if (sb) endHeldStart(sb.dir);
  if (sb) rmSync(join(sb.dir, 'HOLD-START'), { force: true });
  await sb?.down();
  sb = undefined;
});

describe.runIf(hasScript)('kv upgrade on a real terminal, interrupted while a member is down', () => {
  it('`| tee` closed by the Ctrl-C, then a second Ctrl-C: the terminal names the member down and the command that brings it back; that command finishes', async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox;
    const s = sb;
    const endpoints = s
      .spec()
      .members.map((m: { endpoint: string }) => m.endpoint)
      .join(',');
    const args = ['kv', 'upgrade', '--endpoints', endpoints, '--to', '3.3', '--yes', ...FAST, ...DRIVER];
    writeFileSync(join(s.dir, 'HOLD-START'), '');
    // (`trap : INT`: the shell waits for the whole pipeline, as a person's interactive shell does; a non-interactive
    // sh left alone dies of a Ctrl-C once tee has died of one, and the terminal closed under opsctl before its last words)
    const line = `trap : INT; ${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} 2>&1 | tee ${q(join(s.dir, 'upgrade.log'))}`;
    const run = PtySession.run(['sh', '-c', line], { env: s.env });
    sessions.push(run);

    // the first member is stopped and its start is held: it is down now
    const down = await until(
      () => {
        const j = s.journal();
        const stopped = j?.steps.find((st: { kind: string; status: string }) => st.kind === 'stop' && st.status === 'done');
        const starting = j?.steps.find(
          (st: { kind: string; status: string; member: string }) => st.kind === 'start' && st.member === stopped?.member && st.status === 'running',
        );
        return starting ? (stopped.member as string) : undefined;
      },
      120_000,
      'a member stopped, its start running',
    );
    // the start template itself is running (held): the journal says "start running" a moment before the
    // template is spawned, and a Ctrl-C in that moment ends the run before any start (a different case)
    await until(() => existsSync(join(s.dir, 'HELD.pid')), 60_000, 'the held start').catch((e: Error) => {
      throw new Error(`${e.message}; the terminal showed:\n${run.text}`);
    });
    run.ctrlC(); // kills tee too: the pipe opsctl writes to is closed
    // Ctrl-C again, as a person presses it again until the command quits: two SIGINTs that arrive together
    // are one signal to the process (it would then wait at its safe point, after the held start), and its
    // notice of the first went to the closed pipe, so the test cannot see when it was taken
    const exit = run.exitCode(120_000);
    let quit = false;
    void exit.then(
      () => (quit = true),
      () => (quit = true),
    );
    while (!quit) {
      run.ctrlC();
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(await exit).toBe(130);
    const said = run.text.replace(/\s+/g, ' ');
    expect(said).toContain(`${down} is down (stopped by this run, not started yet)`);
    expect(said).toMatch(
      /`opsctl kv upgrade --endpoints \S+ --to 3\.3 --yes .*--no-backup` brings it back and goes on, or `opsctl kv rollback --endpoints \S+ .*` takes the cluster back/,
    );

    // the identical command, as the words give it, finishes
    endHeldStart(s.dir);
    rmSync(join(s.dir, 'HOLD-START'));
    const again = PtySession.opsctl(args, { env: s.env });
    sessions.push(again);
    expect(await again.exitCode(240_000), again.text).toBe(0);
    expect(again.text).toContain('cluster upgraded to 3.3');
    const versions = (await s.kv('version', '--json')).json<Array<{ server: string; cluster: string }>>();
    expect(versions.map((v) => v.server.slice(0, 3))).toEqual(['3.3', '3.3', '3.3']);
    // (the test's own bound is above the sum of its stages' deadlines: a stage that overruns fails naming itself and what the terminal showed)
  }, 700_000);
});

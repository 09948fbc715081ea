import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { readJournal, startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * The question goes where the person is (issue 49): `kv upgrade --to 3.3 2>upgrade.log` on a real
 * terminal (the built binary on a pseudo-terminal, the simulated sandbox). stderr goes to the log, so
 * the plan and the (y/N) question are written to /dev/tty, the answer is read there and noted in the
 * log; the same for kv restore's question. With no terminal at all (a session without a controlling
 * terminal: setsid), the run refuses naming --yes and changes nothing.
 */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.runIf(requireProgram('script (util-linux, for the pty tests)', SCRIPT) && requireProgram('setsid (util-linux)', '/usr/bin/setsid'))(
  'kv: the question on the terminal when stderr is redirected (built binary, pty, sandbox)',
  () => {
    const cfg = tempConfigDir('opsctl-kv-ask-tty-');
    const logs = mkdtempSync(join(tmpdir(), 'opsctl-kv-ask-log-'));
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1' };
    const opsctl = (...args: string[]) => runBin(args, { env: { ...env, CI: '1' }, timeout: 120_000 });
    const sessions: PtySession[] = [];
    /** `opsctl ARGS 2>LOG` typed at a shell on a new terminal (`prefix`: e.g. setsid -w). */
    const shell = (args: string[], log: string, prefix = '') => {
      const s = PtySession.run(['/bin/sh', '-c', `${prefix}${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} 2>${q(log)}`], { env });
      sessions.push(s);
      return s;
    };
    const servers = async () => (JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>).map((v) => v.server);
    const UP = ['kv', 'upgrade', '--to', '3.3', '--settle', '0s', '--poll-interval', '50ms'];

    let c: SimulatedTestCluster | undefined;

    beforeAll(async () => {
      c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: cfg.dir });
      for (let i = 0; i < 3; i++) expect((await opsctl('kv', 'put', `k${i}`, `v${i}`)).exitCode).toBe(0);
    }, 300_000);
    afterEach(() => {
      for (const s of sessions.splice(0)) s.kill();
    });
    afterAll(async () => {
      await c?.destroy();
      cfg.cleanup();
      rmSync(logs, { recursive: true, force: true });
    }, 300_000);

    it('kv upgrade 2>log: the plan and the question on the terminal, the answer in the log; Enter is no, y upgrades', async () => {
      const log = join(logs, 'no.log');
      const no = shell(UP, log);
      await no.waitFor(/Upgrade the cluster to 3\.3: stop and restart 3 members, one at a time\? \(y\/N\)/, 60_000);
      // what the question is about, on the terminal: the summary first, then the plan
      expect(no.text).toMatch(
        /^Upgrade 3\.2 → 3\.3, restarting the 3 members one at a time: kv\d, kv\d, then kv\d \(the leader\)\nNothing blocks it: \d+ of \d+ findings ok/m,
      );
      expect(no.text).toMatch(/Plan: upgrade 3\.2 → 3\.3, one member at a time/);
      no.type('\r');
      expect(await no.exitCode()).toBe(5);
      expect(no.text).toMatch(/one at a time\? No/);
      const noLog = readFileSync(log, 'utf8');
      // the log keeps the plan, the answer given on the terminal, and the outcome
      expect(noLog).toMatch(/Plan: upgrade 3\.2 → 3\.3/);
      expect(noLog).toMatch(/Upgrade the cluster to 3\.3: stop and restart 3 members, one at a time\? no \(answered on the terminal, \/dev\/tty\)/);
      expect(noLog).toMatch(/nothing changed/);
      // (the question is not in the log as a prompt: it went to the terminal)
      expect(noLog).not.toMatch(/\(y\/N\)/);
      expect(await servers()).toEqual(['3.2.32', '3.2.32', '3.2.32']);

      // no terminal at all (a session without one, as a service or `setsid`): refused naming --yes, nothing changed
      const none = join(logs, 'none.log');
      const alone = shell(UP, none, 'setsid -w ');
      expect(await alone.exitCode(120_000)).toBe(2);
      expect(readFileSync(none, 'utf8')).toMatch(
        /kv upgrade needs confirmation before it stops a member, and standard error is redirected and there is no terminal \(\/dev\/tty\) to ask on\n\s+pass --yes to upgrade without a prompt/,
      );
      expect(await servers()).toEqual(['3.2.32', '3.2.32', '3.2.32']);

      const yesLog = join(logs, 'yes.log');
      const yes = shell(UP, yesLog);
      await yes.waitFor(/one at a time\? \(y\/N\)/, 60_000);
      yes.type('y\r');
      expect(await yes.exitCode(240_000)).toBe(0);
      expect(yes.text).toMatch(/one at a time\? Yes/);
      expect(readFileSync(yesLog, 'utf8')).toMatch(
        /one at a time\? yes \(answered on the terminal, \/dev\/tty\)[\s\S]*cluster upgraded to 3\.3: every member healthy/,
      );
      expect(await servers()).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    }, 400_000);

    it('kv restore 2>log: its plan and question on the terminal too (Enter: nothing changed, exit 5)', async () => {
      const rp = (readJournal(cfg.dir) as { restorePoint: { file: string } }).restorePoint;
      const log = join(logs, 'restore.log');
      const s = shell(['kv', 'restore', '--snapshot', rp.file, '--to-version', '3.2', '--poll-interval', '50ms'], log);
      // (the question wraps on the 120-column terminal)
      await s.waitFor(/Rebuild the cluster from[\s\S]*is lost\? \(y\/N\)/, 60_000);
      expect(s.text).toMatch(/every write after the snapshot's revision \d+ is lost/);
      s.type('\r');
      expect(await s.exitCode()).toBe(5);
      expect(readFileSync(log, 'utf8')).toMatch(/is lost\? no \(answered on the terminal, \/dev\/tty\)/);
      expect(await servers()).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    }, 300_000);
  },
);

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { readJournal, startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * `kv restore` asks on a terminal before it stops anything (default no), on a real pseudo-terminal
 * with the built binary, against the simulated sandbox after a finished 3.2 → 3.3 upgrade.
 */
describe.runIf(requireProgram('script (util-linux, for the pty tests)', SCRIPT))(
  'kv restore: the confirmation on a real terminal (built binary, sandbox)',
  () => {
    const cfg = tempConfigDir('opsctl-kv-restore-pty-');
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1' };
    const opsctl = (...args: string[]) => runBin(args, { env: { ...env, CI: '1' }, timeout: 120_000 });
    const sessions: PtySession[] = [];
    const pty = (args: string[]) => {
      const s = PtySession.opsctl(args, { env });
      sessions.push(s);
      return s;
    };
    const servers = async () => (JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>).map((v) => v.server);
    let rp: { file: string; revision: string };
    let c: SimulatedTestCluster | undefined;

    beforeAll(async () => {
      c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: cfg.dir });
      for (let i = 0; i < 5; i++) expect((await opsctl('kv', 'put', `k${i}`, `v${i}`)).exitCode).toBe(0);
      const up = await opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--settle', '0s', '--poll-interval', '50ms');
      expect(up.exitCode, String(up.stderr)).toBe(0);
      expect((await opsctl('kv', 'put', 'after', 'x')).exitCode).toBe(0);
      rp = readJournal(cfg.dir).restorePoint;
    }, 300_000);
    afterEach(() => {
      for (const s of sessions.splice(0)) s.kill();
    });
    afterAll(async () => {
      await c?.destroy();
      cfg.cleanup();
    }, 300_000);

    it('Enter (the default, no) changes nothing and exits 5; "y" restores every member to 3.2', async () => {
      const no = pty(['kv', 'restore', '--snapshot', rp.file, '--to-version', '3.2', '--poll-interval', '50ms']);
      // (the question wraps on the 120-column terminal)
      await no.waitFor(/Rebuild the cluster from[\s\S]*every write after revision \d+ is lost\? \(y\/N\)/, 30_000);
      expect(no.text).toMatch(/every write after the snapshot's revision \d+ is lost/);
      no.type('\r');
      expect(await no.exitCode()).toBe(5);
      expect(no.text).toMatch(/lost\? No\n[\s\S]*nothing changed/);
      expect(await servers()).toEqual(['3.3.27', '3.3.27', '3.3.27']);

      const yes = pty(['kv', 'restore', '--snapshot', rp.file, '--to-version', '3.2', '--poll-interval', '50ms']);
      await yes.waitFor(/Rebuild the cluster from[\s\S]*\(y\/N\)/, 30_000);
      yes.type('y\r');
      expect(await yes.exitCode()).toBe(0);
      expect(yes.text).toMatch(/cluster restored from .*: 3 members healthy on 3\.2 \(cluster version 3\.2\.0\)/);
      expect(await servers()).toEqual(['3.2.32', '3.2.32', '3.2.32']);
      expect((await opsctl('kv', 'get', 'after', '--require')).exitCode).toBe(1);
    }, 300_000);
  },
);

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CommandDriver } from '../../src/kv/drivers/command.js';

const member = { name: 'etcd1', endpoint: 'http://10.0.0.1:2379', host: '10.0.0.1' };
const driver = (running: string, timeoutMs = 10_000) => new CommandDriver({ stop: 'true', start: 'true', running }, execa, process.env, timeoutMs);

/** The running template decides "is the member's process there?": only its own answer counts, never ssh's failure to ask. */
describe('command driver: the running check', () => {
  it('exit 0 is running, another exit of the command is not running', async () => {
    expect(await driver('sh -c "exit 0"').isRunning(member)).toBe(true);
    expect(await driver('sh -c "exit 3"').isRunning(member)).toBe(false); // systemctl is-active: inactive
  });

  it('exit 255 (ssh could not reach the host), a timeout or a missing program is an error naming the member, not "gone"', async () => {
    await expect(driver('sh -c "echo ssh: connect to host {host} port 22: Connection timed out >&2; exit 255"').isRunning(member)).rejects.toThrow(
      /cannot tell whether etcd1 runs: `sh -c .*` failed \(exit 255: could not reach the host\): ssh: connect to host 10\.0\.0\.1 port 22: Connection timed out/,
    );
    await expect(driver('sleep 5', 200).isRunning(member)).rejects.toThrow(/cannot tell whether etcd1 runs: .*timed out after 200 ms/);
    await expect(driver('/nonexistent/opsctl-no-such-program {host}').isRunning(member)).rejects.toThrow(
      /cannot tell whether etcd1 runs: `\/nonexistent\/opsctl-no-such-program 10\.0\.0\.1` failed/,
    );
  });
});

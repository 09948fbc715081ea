import { describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { stopForGood, type BackupDriver } from '../../src/kv/containers/backup.js';
import type { Engine } from '../../src/kv/containers/engine.js';
import type { ContainerSettings } from '../../src/kv/containers/settings.js';

const m = { name: 'c1', endpoint: 'http://127.0.0.1:2379' } as MemberSpec;

/** A fake engine: each look answers the next state of `looks` (the last one again after), and counts the stops. */
function driver(looks: Array<Partial<ContainerSettings>>, stopExit = 0) {
  const seen = { looks: 0, stops: 0, held: [] as string[] };
  const base = { id: 'abc', name: 'c1', running: false, restarting: false, restart: { name: 'always', retries: 0 }, restarts: 0 };
  const engine = {
    program: 'podman',
    stopArgs: (name: string, s: number) => ['stop', '--time', String(s), name],
    inspect: async () => ({ ...base, ...looks[Math.min(seen.looks++, looks.length - 1)] }) as ContainerSettings,
    run: async (_m: MemberSpec, args: string[]) => {
      if (args[0] === 'stop') seen.stops++;
      return { stdout: '', stderr: '', exitCode: args[0] === 'stop' ? stopExit : 0, argv: args };
    },
  } as unknown as Engine;
  const d: BackupDriver = {
    engine,
    containerOf: () => 'c1',
    settingsSource: async () => undefined,
    heldStopped: (id) => void seen.held.push(id),
  };
  return { d, seen };
}

describe('a container with a restart policy stopped for good (containers/backup.ts stopForGood)', () => {
  it('one seen running and stopped without an error is held after one look: no watch of 2 s', async () => {
    const { d, seen } = driver([{ running: true }, { running: false }]);
    await stopForGood(d, m, 60);
    expect(seen).toEqual({ looks: 2, stops: 1, held: ['abc'] });
  });

  it('one between two starts of its policy is watched (5 looks over 2 s) before it is held', async () => {
    const { d, seen } = driver([{ running: false, restarting: true }, { running: false }]);
    await stopForGood(d, m, 60);
    expect(seen.stops).toBe(1);
    expect(seen.looks).toBe(6);
    expect(seen.held).toEqual(['abc']);
  });

  it('one seen running whose stop failed, or that was started again meanwhile (its restart count moved), is watched too', async () => {
    const failed = driver([{ running: true }, { running: false }], 125);
    await stopForGood(failed.d, m, 60);
    expect(failed.seen.looks).toBe(6);
    const again = driver([{ running: true }, { running: false, restarts: 1 }]);
    await stopForGood(again.d, m, 60);
    expect(again.seen.looks).toBe(7);
    expect(again.seen.held).toEqual(['abc']);
  });
});

import { describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { stopForGood, type BackupDriver } from '../../src/kv/containers/backup.js';
import type { Engine } from '../../src/kv/containers/engine.js';
import type { ContainerSettings } from '../../src/kv/containers/settings.js';

const m = { name: 'c1', endpoint: 'http://127.0.0.1:2379' } as MemberSpec;

/** A fake engine: each look answers the next state of `looks` (the last one again after), and counts the stops. */
function driver(looks: Array<Partial<ContainerSettings>>, stopExit = 0) {
  const seen = { looks: 0, stops: 0, held: [] as string[] };
  const base = {
    id: 'abc',
    name: 'c1',
    running: false,
    restarting: false,
    restart: { name: 'always', retries: 0 },
    restarts: 0,
    startedAt: '2026-11-29T02:24:30.865213069Z',
  };
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
  /** The run seen at the first look, ended `ranS` seconds after it began (the engine's host's clock). */
  const ended = (ranS: number) => ({ running: false, finishedAt: new Date(Date.parse('2026-11-29T02:24:30.865Z') + ranS * 1000).toISOString() });

  it('one seen running, stopped without an error, whose run lasted 10 s or more, is held after one look: no watch of 2 s', async () => {
    const { d, seen } = driver([{ running: true }, ended(600)]);
    await stopForGood(d, m, 60);
    expect(seen).toEqual({ looks: 2, stops: 1, held: ['abc'] });
  });

  it('one whose run lasted less (a start that fails under its policy may have ended by itself just before the stop), or another run, is watched', async () => {
    const short = driver([{ running: true }, ended(3)]);
    await stopForGood(short.d, m, 60);
    expect(short.seen.looks).toBe(7);
    const other = driver([{ running: true }, { ...ended(600), startedAt: '2026-11-29T02:34:30.865Z' }]);
    await stopForGood(other.d, m, 60);
    expect(other.seen.looks).toBe(7);
    const unknown = driver([{ running: true }, { running: false }]);
    await stopForGood(unknown.d, m, 60);
    expect(unknown.seen.looks).toBe(7);
    expect(unknown.seen.held).toEqual(['abc']);
  });

  it('one between two starts of its policy is watched (5 looks over 2 s) before it is held', async () => {
    const { d, seen } = driver([{ running: false, restarting: true }, { running: false }]);
    await stopForGood(d, m, 60);
    expect(seen.stops).toBe(1);
    expect(seen.looks).toBe(6);
    expect(seen.held).toEqual(['abc']);
  });

  it('one seen running whose stop failed, or that was started again meanwhile (its restart count moved), is watched too', async () => {
    const failed = driver([{ running: true }, ended(600)], 125);
    await stopForGood(failed.d, m, 60);
    expect(failed.seen.looks).toBe(6);
    const again = driver([{ running: true }, { ...ended(600), restarts: 1 }]);
    await stopForGood(again.d, m, 60);
    expect(again.seen.looks).toBe(7);
    expect(again.seen.held).toEqual(['abc']);
  });
});

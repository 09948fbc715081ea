import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SharedPacer } from '../../src/core/shared-pacer.js';

let dir: string;
let clock: number;
const waits: number[] = [];
/** Two "processes" pacing through one file, on a fake clock that a sleep moves forward. */
const make = (file: string, limit = 3, windowMs = 1000) =>
  new SharedPacer(file, {
    limit,
    windowMs,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    onWait: (ms) => waits.push(ms),
  });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-pacer-'));
  clock = 1_000_000;
  waits.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('SharedPacer', () => {
  it('shares one window between pacers on the same file: the 4th request waits until the first slot frees', async () => {
    const file = join(dir, 'p.json');
    const a = make(file);
    const b = make(file);
    await a.init();
    for (let i = 0; i < 2; i++) (await a.acquire())();
    (await b.acquire())();
    await a.flush();
    await b.flush();
    const start = clock;
    const release = await b.acquire();
    expect(clock - start).toBeGreaterThanOrEqual(1000);
    expect(waits[0]).toBe(1001);
    release();
    await b.flush();
  });

  it('a slot in flight is counted until its response arrives', async () => {
    const file = join(dir, 'p.json');
    const a = make(file, 1, 500);
    const b = make(file, 1, 500);
    const held = await a.acquire();
    let got = false;
    const pending = b.acquire().then((r) => {
      got = true;
      return r;
    });
    // b polls while a's request is in flight; it cannot get a slot until a releases and the window passes
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toBe(false);
    const releasedAt = clock;
    held();
    await a.flush();
    (await pending)();
    await b.flush();
    expect(got).toBe(true);
    expect(clock).toBeGreaterThanOrEqual(releasedAt + 500);
  });

  it("a 429's pause reaches every pacer on the file", async () => {
    const file = join(dir, 'p.json');
    const a = make(file);
    const b = make(file);
    a.pause(5000);
    await a.flush();
    const start = clock;
    (await b.acquire())();
    await b.flush();
    expect(clock - start).toBeGreaterThanOrEqual(5000);
  });

  it('starts over from a torn or foreign file instead of failing', async () => {
    const file = join(dir, 'p.json');
    writeFileSync(file, '{"slots": [tor');
    const a = make(file);
    (await a.acquire())();
    await a.flush();
    writeFileSync(file, '{"slots": 7}');
    const b = make(file);
    (await b.acquire())();
    await b.flush();
  });

  it('init fails (the caller names the file) when the directory cannot be made', async () => {
    writeFileSync(join(dir, 'blocker'), 'a file, not a directory');
    await expect(make(join(dir, 'blocker', 'p.json')).init()).rejects.toThrow(/ENOTDIR|EEXIST/);
  });
});

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { copyWhole } from '../../src/commands/kv/lib/rehearsal.js';
import { COPY_READY, JUDGED, parseJudged } from '../../src/kv/rehearsal/clone.js';

/**
 * What the run that rehearses tells its clone's run on its input (src/kv/rehearsal/clone.ts): the copy is whole
 * (COPY_READY), then what it read of the same data for its plan (JUDGED: each hop's etcdutl check v2store and WAL
 * replay), which the clone's plan takes instead of reading its copy again; anything it cannot read as that, or an
 * input that ends without it, leaves the clone to read its copy itself.
 */
const ctxWith = (stdin: PassThrough) => ({ io: { isStdinTTY: false, stdin } }) as unknown as Context;
const V2 = [{ member: 'kv1', ok: true, detail: 'etcdutl check v2store: No custom content found in both v2store and WAL records.' }];

describe('the rehearsal: what the clone is told', () => {
  it('parseJudged: each hop by name, its v2store and walReplay; another key, a shape or text of another kind: not taken', () => {
    const told = parseJudged(
      JSON.stringify([
        ['3.5 → 3.6', { v2store: V2 }],
        ['3.6 → 3.7', { walReplay: { why: 'a later hop' } }],
      ]),
    );
    expect(told?.get('3.5 → 3.6')).toEqual({ v2store: V2 });
    expect(told?.get('3.6 → 3.7')).toEqual({ walReplay: { why: 'a later hop' } });
    expect(told?.get('__proto__')).toBeUndefined();
    expect(parseJudged(JSON.stringify([['3.5 → 3.6', {}]]))?.get('3.5 → 3.6')).toEqual({});
    for (const bad of [
      undefined,
      '',
      'not json',
      '{"3.5 → 3.6": {}}',
      JSON.stringify([['3.5 → 3.6', { v3Membership: { why: 'x' } }]]),
      JSON.stringify([['3.5 → 3.6', { v2store: 'ok' }]]),
      JSON.stringify([['3.5 → 3.6', { v2store: null }]]),
      JSON.stringify([[35, { v2store: V2 }]]),
      JSON.stringify([['3.5 → 3.6']]),
    ])
      expect(parseJudged(bad), String(bad)).toBeUndefined();
  });

  it('copyWhole: waits for the copy, then gives what the parent read once its line comes', async () => {
    const stdin = new PassThrough();
    let whole = false;
    const waiting = copyWhole(ctxWith(stdin)).then((r) => ((whole = true), r));
    stdin.write('opsctl-copy: rea');
    await new Promise((r) => setTimeout(r, 20));
    expect(whole).toBe(false);
    stdin.write(`dy\n`);
    const { judged } = await waiting;
    let told: unknown = 'pending';
    void judged.then((j) => (told = j));
    await new Promise((r) => setTimeout(r, 20));
    expect(told).toBe('pending');
    stdin.write(`${JUDGED}${JSON.stringify([['3.5 → 3.6', { v2store: V2 }]]).slice(0, 10)}`);
    stdin.end(`${JSON.stringify([['3.5 → 3.6', { v2store: V2 }]]).slice(10)}\n`);
    expect((await judged)?.get('3.5 → 3.6')).toEqual({ v2store: V2 });
  });

  it('copyWhole: an input that ends after the copy without the line: nothing told (the clone reads its copy); before it: refused', async () => {
    const quiet = new PassThrough();
    const w = copyWhole(ctxWith(quiet));
    quiet.end(COPY_READY);
    expect(await (await w).judged).toBeUndefined();
    const cut = new PassThrough();
    const c = copyWhole(ctxWith(cut));
    cut.end('opsctl-copy');
    await expect(c).rejects.toThrow(/the rehearsal's copy was not made whole \(its input ended first\)/);
  });
});

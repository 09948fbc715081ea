import { describe, expect, it } from 'vitest';
import { until } from '../helpers/kv.js';

describe("the tests' until (test/helpers/kv.ts)", () => {
  it("a wait longer than the test's own timeout fails before it, naming what it waited for", { timeout: 3_000 }, async () => {
    const err = (await until(() => false, 60_000, 'a thing that never comes').catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^timed out waiting for a thing that never comes \(its \d+ ms cut short by the test's own timeout\)$/);
  });

  it('a wait within the budget is its own', { timeout: 10_000 }, async () => {
    const err = (await until(() => false, 50, 'a short one').catch((e: unknown) => e)) as Error;
    expect(err.message).toBe('timed out waiting for a short one');
  });
});

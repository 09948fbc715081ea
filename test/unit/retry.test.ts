import { describe, expect, it } from 'vitest';
import { backoffMs, HTTP_BACKOFF, STORE_BACKOFF } from '../../src/core/retry.js';

describe('the back-off of the one retry policy (core/retry.ts)', () => {
  it('doubles from its base up to its cap; full jitter anywhere below the step, equal jitter from half of it', () => {
    const steps = (random: number, b = HTTP_BACKOFF) => [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(n, b, () => random));
    // core/http.ts: 250 ms · 2^(n−1), at most 8 s
    expect(steps(0.999_999)).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(steps(0.5)).toEqual([125, 250, 500, 1000, 2000, 4000, 4000, 4000]);
    expect(steps(0)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    // kv/offsite's store: 400 ms · 2^(n−1), at most 8 s, never less than half the step
    expect(steps(0, STORE_BACKOFF)).toEqual([200, 400, 800, 1600, 3200, 4000, 4000, 4000]);
    expect(steps(0.999_999, STORE_BACKOFF)).toEqual([400, 800, 1600, 3200, 6400, 8000, 8000, 8000]);
  });
});

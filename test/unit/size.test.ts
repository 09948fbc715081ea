import { describe, expect, it } from 'vitest';
import { formatSize, parseSize } from '@opsctl/shared/size.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

describe('byte sizes, read and said in binary units (@opsctl/shared/size.ts)', () => {
  it('parseSize: a number of bytes or one with a unit, binary either way (1 MB = 1 MiB); undefined for none or zero', () => {
    expect(parseSize('50MB')).toBe(50 * MiB);
    expect(parseSize('512k')).toBe(512 * KiB);
    expect(parseSize(' 1.5GiB ')).toBe(1.5 * GiB);
    expect(parseSize('1000')).toBe(1000);
    expect(parseSize('lots')).toBeUndefined();
    expect(parseSize('0')).toBeUndefined();
  });

  it('formatSize: the largest unit under which the size is at least 1, one decimal, no trailing .0', () => {
    expect([0, 512, 1023].map(formatSize)).toEqual(['0 B', '512 B', '1023 B']);
    expect([KiB, 1.5 * KiB, 300 * KiB].map(formatSize)).toEqual(['1 KiB', '1.5 KiB', '300 KiB']);
    expect([MiB, 64 * MiB, 949_678_490, 174 * MiB].map(formatSize)).toEqual(['1 MiB', '64 MiB', '905.7 MiB', '174 MiB']);
    expect([2 * GiB, 2.4 * GiB, 5 * 1024 * GiB].map(formatSize)).toEqual(['2 GiB', '2.4 GiB', '5 TiB']);
    // what rounds up to 1024 of a unit is said as 1 of the next
    expect([MiB - 1, GiB - 20].map(formatSize)).toEqual(['1 MiB', '1 GiB']);
    // decimal sizes (a defragmentation's db) in binary units too
    expect([14_300_000, 200_000].map(formatSize)).toEqual(['13.6 MiB', '195.3 KiB']);
  });
});

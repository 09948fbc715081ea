import { describe, expect, it } from 'vitest';
import { badGates, REMOVED_IN_37, refusedFlag } from '@opsctl/etcd-sim/flags.js';
import { REMOVED_37 } from '../../src/kv/rules/experimental.js';

/** The simulated member's start-up flag checks, as real 3.5.35, 3.6.16 and 3.7.3 make them (measured). */
describe('simulated members refuse flags as the real binaries do', () => {
  it("3.7 refuses the removed experimental flags at the first one (kubeadm's two: only the first is named, exit 2 in the member)", () => {
    const kubeadm = ['--name', 'kv1', '--experimental-initial-corrupt-check=true', '--experimental-watch-progress-notify-interval', '5s'];
    expect(refusedFlag('3.7', kubeadm)).toBe('flag provided but not defined: -experimental-initial-corrupt-check');
    expect(refusedFlag('3.6', kubeadm)).toBeUndefined();
    expect(refusedFlag('3.7', ['--feature-gates=InitialCorruptCheck=true', '--watch-progress-notify-interval=5s'])).toBeUndefined();
    // the same 23 names the rulebook knows
    expect([...REMOVED_IN_37].sort()).toEqual(Object.keys(REMOVED_37).sort());
  });

  it("--feature-gates: not a flag of 3.5; from 3.6 an unknown gate or a value that is not a bool is refused in etcd's words; 3.7 knows two more gates", () => {
    expect(refusedFlag('3.5', ['--feature-gates=InitialCorruptCheck=true'])).toBe('flag provided but not defined: -feature-gates');
    expect(refusedFlag('3.6', ['--feature-gates=Foo=true'])).toBe('invalid value "Foo=true" for flag -feature-gates: unrecognized feature gate: Foo');
    expect(badGates('3.7', 'InitialCorruptCheck=maybe')).toBe(
      'invalid value of InitialCorruptCheck=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
    );
    expect(badGates('3.6', 'FastLeaseKeepAlive=true')).toBe('unrecognized feature gate: FastLeaseKeepAlive');
    expect(badGates('3.7', 'FastLeaseKeepAlive=true,CompactHashCheck=true')).toBeUndefined();
  });
});

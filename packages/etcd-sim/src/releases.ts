/**
 * The release a simulated member of each minor reports (the real binaries the tests run; 3.4 is Debian's
 * etcd-server; 3.5 to 3.7 scripts/etcd-versions.json's). One per minor of the ladder's table
 * (@opsctl/shared/etcd-ladder; test/unit/kv-ladder-table.test.ts holds them together).
 */
export const SIM_RELEASES: Readonly<Record<string, string>> = Object.freeze({
  '3.2': '3.2.32',
  '3.3': '3.3.27',
  '3.4': '3.4.23',
  '3.5': '3.5.35',
  '3.6': '3.6.16',
  '3.7': '3.7.3',
});

/** The minors a simulated member can run. */
export const SIM_MINORS: readonly string[] = Object.freeze(Object.keys(SIM_RELEASES));

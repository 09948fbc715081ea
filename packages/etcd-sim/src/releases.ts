/** The release a simulated member of each minor reports (the real binaries the tests run; 3.4 is Debian's etcd-server). */
export const SIM_RELEASES: Readonly<Record<string, string>> = Object.freeze({
  '3.2': '3.2.32',
  '3.3': '3.3.27',
  '3.4': '3.4.23',
  '3.5': '3.5.35',
  '3.6': '3.6.16',
});

/** The minors a simulated member can run. */
export const SIM_MINORS: readonly string[] = Object.freeze(Object.keys(SIM_RELEASES));

/**
 * Whether a browser can be launched on this machine, and if not why: the one rule `opsctl login` and
 * every `--web` follow. Not with --no-browser or in CI; not in an SSH session or, on Linux, without a
 * display (the system opener would open nothing, or open it on another screen), unless BROWSER names
 * the program to run (a text browser or a script needs no display, and the person chose it for this session).
 */
export function browserDecision(
  env: NodeJS.ProcessEnv,
  { browser = true, platform = process.platform }: { browser?: boolean; platform?: NodeJS.Platform } = {},
): { open: boolean; reason?: string } {
  if (!browser) return { open: false, reason: '--no-browser' };
  if (env.CI) return { open: false, reason: 'CI is set' };
  if (env.BROWSER) return { open: true };
  if (env.SSH_CONNECTION) return { open: false, reason: 'this is an SSH session' };
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return { open: false, reason: 'there is no display (DISPLAY/WAYLAND_DISPLAY unset)' };
  return { open: true };
}

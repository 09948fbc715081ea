/** The exit codes every opsctl command uses. Documented by `opsctl help exit-codes` and the README. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  partial: 3,
  auth: 4,
  declined: 5,
  changes: 6,
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const exitCodeHelp: ReadonlyArray<[number, string, string]> = [
  [0, 'ok', 'the command did what was asked'],
  [1, 'failure', 'the command failed: a server error, a network error, a refused pre-flight check'],
  [2, 'usage', 'bad input: an unknown flag, a missing argument, a field the contract forbids; nothing was sent'],
  [3, 'partial', 'some changes were applied and some were not, or an upgrade halted safely; re-run to resume'],
  [4, 'auth', 'authentication is needed or was refused: sign in (opsctl login) or set a token'],
  [5, 'declined', 'you answered no at a confirmation prompt: nothing was changed'],
  [6, 'changes', 'with --exit-code: the plan has changes (with --dry-run: pending, none made; without: made); 0 means nothing to do'],
  [130, 'interrupted', 'interrupted by Ctrl-C (SIGINT) or SIGTERM'],
];

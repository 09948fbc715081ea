/**
 * A file system error in plain words, for a message that already names the file: "does not exist", not
 * ENOENT. Unknown codes keep their code (a person can look it up); a non-errno error its message.
 */
export function fileProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOENT':
      return 'does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read: permission denied';
    case 'EISDIR':
      return 'is a directory, not a file';
    case 'ENOTDIR':
      return 'does not exist (a part of its path is not a directory)';
    case 'ELOOP':
      return 'is a loop of symbolic links';
    case 'ENAMETOOLONG':
      return 'is a name too long for the file system';
    case 'EMFILE':
    case 'ENFILE':
      return 'cannot be opened now: too many open files';
    default:
      return e?.code ? `cannot be read (${e.code})` : `cannot be read: ${(err as Error)?.message ?? String(err)}`;
  }
}

/** What to do about it: a missing file wants its path checked, a refused one its permissions. */
export function fileFix(err: unknown, path: string): string | undefined {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'check the path (relative paths start from the current directory)';
  if (code === 'EACCES' || code === 'EPERM') return `give your user read access (ls -l ${path}), or copy it somewhere you can read`;
  return undefined;
}

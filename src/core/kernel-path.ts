import { realpath } from 'node:fs/promises';
import { UsageError } from './errors.js';

/** File systems the kernel makes up: their "files" are the state of processes and devices (/proc/self/environ holds opsctl's own tokens). */
const KERNEL_ROOTS = ['/proc', '/sys', '/dev'];

/** The kernel file system `real` (a resolved path) lies in, or undefined. */
export function kernelRoot(real: string): string | undefined {
  return KERNEL_ROOTS.find((root) => real === root || real.startsWith(`${root}/`));
}

/**
 * Refuses a file the user named (`tracker files upload FILE`, `-f FILE`) that lies under /proc, /sys or
 * /dev once symlinks are resolved: a usage error (exit 2) naming it and where it leads. Returns the
 * resolved path; a path that cannot be resolved (ENOENT…) is thrown as it is, for the caller to name.
 */
export async function refuseKernelFile(path: string, arg: string, opts: { what: string; field: string; hint: string }): Promise<string> {
  // a link that leads nowhere real (/dev/stdin on a pipe: /proc/self/fd/0 -> "pipe:[…]") is judged by its own path
  const real = await realpath(path).catch((err: unknown) => {
    if (kernelRoot(path)) return path;
    throw err;
  });
  const root = kernelRoot(real);
  if (root) {
    throw new UsageError(`${opts.what} ${arg}: ${real === path ? 'it' : `it resolves to ${real}, which`} is under ${root}, not a file of yours`, {
      code: 'kernel_file',
      field: opts.field,
      hint: opts.hint,
    });
  }
  return real;
}

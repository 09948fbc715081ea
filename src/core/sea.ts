/**
 * Whether this process is the single executable (`npm run package`): it runs dist/'s own chunks from its
 * assets, so the question is asked at run time (node:sea), not decided by the build.
 */
export function isSea(): boolean {
  try {
    const sea = process.getBuiltinModule('node:sea') as { isSea?: () => boolean } | undefined;
    return sea?.isSea?.() === true;
  } catch {
    return false;
  }
}

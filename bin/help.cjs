'use strict';
// `opsctl [command words] --help` answered without the CLI: bin/opsctl.cjs (dist/help/) and bin/sea.cjs (its assets).
/**
 * `opsctl [command words] --help` (or `-h`): the text main() prints, as the build rendered it for every command
 * (scripts/help-texts.mjs), when it is the text this output would get: stdout not a terminal (commander wraps
 * at 80 columns), or a terminal 80 columns wide or at least as wide as the text's longest line. Anything else
 * (a flag among the words, a word that names no command, a terminal of another width, a dist/ without the
 * texts) goes through the CLI as before. True when the help was printed. `read(name)` gives dist/help/'s file
 * `name` (from the file system, or the single executable's assets).
 */
function renderedHelp(argv, read) {
  const flag = argv[argv.length - 1];
  if (flag !== '--help' && flag !== '-h') return false;
  const words = argv.slice(0, -1);
  if (!words.every((w) => /^[a-z][a-z0-9-]*$/.test(w))) return false;
  let entry;
  try {
    const texts = JSON.parse(read(`${words.slice(0, 2).join('.') || '_'}.json`));
    entry = Object.hasOwn(texts, words.join(' ')) ? texts[words.join(' ')] : undefined;
  } catch {
    return false;
  }
  if (!entry) return false;
  let text = entry.n;
  if (process.getBuiltinModule('node:tty').isatty(1)) {
    const columns = process.stdout.columns;
    text = columns === 80 ? entry.n : columns >= entry.m ? entry.w : undefined;
  }
  if (typeof text !== 'string') return false;
  // a reader that stops early (| head) ends it quietly, as the CLI does
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  process.stdout.write(text);
  return true;
}

module.exports = { renderedHelp };

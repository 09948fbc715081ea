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
  const plain = notATerminal(1);
  if (!plain && process.getBuiltinModule('node:tty').isatty(1)) {
    const columns = process.stdout.columns;
    text = columns === 80 ? entry.n : columns >= entry.m ? entry.w : undefined;
  }
  if (typeof text !== 'string') return false;
  printOut(text, plain);
  return true;
}

/** `text` to stdout; a reader that stops early (| head) ends it quietly, as the CLI does. `plain`: notATerminal(1), if known. */
function printOut(text, plain = notATerminal(1)) {
  if (plain) return writeAll(1, text);
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  process.stdout.write(text);
}

/**
 * Whether descriptor `fd` is surely no terminal (a file, a pipe, a socket, /dev/null; POSIX): it is then written
 * with writeSync, as Node's stream of it would write (synchronously), without making that stream or asking
 * node:tty, each of which loads node:net and every stream module (about a tenth of `node -e 0`'s CPU).
 */
function notATerminal(fd) {
  if (process.platform === 'win32') return false;
  const fs = process.getBuiltinModule('node:fs');
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile() || st.isFIFO() || st.isSocket()) return true;
    return st.isCharacterDevice() && st.rdev === fs.statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

/** All of `text` to `fd`: a short write continued, a non-blocking descriptor waited on; a closed pipe (| head) ends quietly. */
function writeAll(fd, text) {
  const { writeSync } = process.getBuiltinModule('node:fs');
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length;) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (err) {
      if (err.code === 'EPIPE') process.exit(0);
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

module.exports = { renderedHelp, printOut };

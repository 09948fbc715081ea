'use strict';
// `node --require` this to have every script of bin/ and dist/ the process reads reported on stderr
// ("loaded <file url>"), every chunk of dist/ it runs ("ran <file url>", its own file or a copy), and at exit the Node built-in modules it loaded ("builtins <json array>")
// and, when an AsyncLocalStorage was entered, "als entered".
// bin/load.cjs and Node's CommonJS loader both read a module's file with fs.readFileSync (--require, not
// --import: with --import, Node would run the main script through its ES-module loader instead).
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');

if (process.env.OPSCTL_RECORD_MODULES) {
  const read = fs.readFileSync;
  fs.readFileSync = function (file, ...rest) {
    if (typeof file === 'string' && /[\\/](bin|dist)[\\/].*\.cjs$/.test(file)) fs.writeSync(2, `loaded ${pathToFileURL(file).href}\n`);
    return read.call(this, file, ...rest);
  };
  // bin/load.cjs runs some chunks from a copy carried in another chunk's file (scripts/pack-chunks.mjs): it names each chunk it runs
  globalThis[Symbol.for('opsctl.chunk-ran')] = (file) => fs.writeSync(2, `ran ${pathToFileURL(file).href}\n`);
  // an AsyncLocalStorage entered (on Node 20 a hook then runs for every promise the process makes): "als entered"
  const { AsyncLocalStorage } = require('node:async_hooks');
  let entered = false;
  for (const name of ['run', 'enterWith']) {
    const original = AsyncLocalStorage.prototype[name];
    AsyncLocalStorage.prototype[name] = function (...args) {
      entered = true;
      return original.apply(this, args);
    };
  }
  process.on('exit', () => {
    if (entered) process.stderr.write('als entered\n');
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
    process.stderr.write(`builtins ${JSON.stringify(builtins)}\n`);
  });
}

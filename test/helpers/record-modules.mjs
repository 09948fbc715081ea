// `node --import` this to have every ESM module the process loads reported on stderr ("loaded <url>"),
// and at exit the Node built-in modules it loaded ("builtins <json array>").
import { register } from 'node:module';

if (process.env.OPSCTL_RECORD_MODULES) {
  register(
    `data:text/javascript,${encodeURIComponent(`
      import { writeSync } from 'node:fs';
      export async function load(url, context, next) {
        if (url.startsWith('file:')) writeSync(2, 'loaded ' + url + '\\n');
        return next(url, context);
      }
    `)}`,
  );
  process.on('exit', () => {
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
    process.stderr.write(`builtins ${JSON.stringify(builtins)}\n`);
  });
}

// `node --import` this to have every ESM module the process loads reported on stderr ("loaded <url>").
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
}

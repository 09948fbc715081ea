import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** End-to-end tests run the built binary: make sure it exists (npm test builds first). */
export default function setup(): void {
  const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `npm run build` (npm test does it for you)');
}

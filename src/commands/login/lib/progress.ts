import type { IOStreams } from '../../../core/io.js';
import type { LoginProgress } from '../../../auth/browser-login.js';

/** How a browser sign-in's steps read on stderr (`opsctl login`, `auth refresh --scopes`). */
export function showLoginProgress(io: Pick<IOStreams, 'err' | 'warn'>): (event: LoginProgress) => void {
  return (event) => {
    switch (event.kind) {
      case 'open-url':
        return io.err(`Sign in at ${event.host} in your browser. Open this URL if no browser appears:\n\n  ${event.url}\n`);
      case 'consent-as':
        return io.err(
          `Signing in at ${event.host} as ${event.account}: opsctl submits the mock's consent form itself (no browser), granting every requested scope…`,
        );
      case 'browser-failed':
        return io.warn('could not open a browser: open the URL above yourself');
      case 'no-browser':
        io.err(`Not opening a browser (${event.reason}). Open the URL above on any machine with a browser.`);
        if (event.local) {
          io.err(
            'This is a local mock: without any browser, run opsctl login --consent-as alice@example.com instead (it grants every requested scope as that seeded account).',
          );
        }
        return io.err(
          `The browser will be sent to ${event.redirectUri}. If that browser is on another machine, the page will fail to load: copy its full address and paste it here, then press Enter.`,
        );
      case 'waiting':
        return io.err(`Waiting for the browser (up to ${event.seconds} s)…`);
      case 'wrong-state':
        return io.warn('ignored a sign-in response with the wrong state (stale tab or forged request); still waiting');
      case 'paste-refused':
        return io.warn(`${event.problem}; paste again, or wait for the browser`);
    }
  };
}

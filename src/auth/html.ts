import { escapeHtml, htmlPage } from '@opsctl/shared/html.js';

// escaping and the page frame are shared with the mock's pages (packages/shared)
export { escapeHtml, htmlPage };

/** The page the loopback listener shows the browser: success or the error, every value escaped. */
export function resultPage({ ok, title, lines }: { ok: boolean; title: string; lines: string[] }): string {
  return htmlPage(
    `opsctl: ${title}`,
    `<h1 class="${ok ? 'ok' : 'err'}" id="result" data-ok="${ok}">${escapeHtml(title)}</h1>
${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n')}
<p class="muted">You can close this window and return to the terminal.</p>`,
  );
}

/** The query parameter the fragment page adds when it asks again (so a response without state is judged, not looped). */
export const FRAGMENT_MARKER = 'opsctl_fragment';

/**
 * The loopback page for a response whose parameters (or only its `state`) came after `#`: it reads
 * `location.hash`, adds `state`, `code`, `error`, `error_description`, `scope` and `iss` that the query
 * lacks, and asks the same listener again with them as the query. Same origin, one inline script allowed
 * by its nonce (Content-Security-Policy), nothing else loaded.
 */
export function fragmentPage(nonce: string): string {
  const script = `(function(){var h=new URLSearchParams(location.hash.slice(1));var q=new URLSearchParams(location.search);
["state","code","error","error_description","scope","iss"].forEach(function(k){if(!q.has(k)&&h.has(k))q.set(k,h.get(k));});
q.set("${FRAGMENT_MARKER}","1");location.replace(location.pathname+"?"+q.toString());})();`;
  return htmlPage(
    'opsctl: finishing sign-in',
    `<h1 id="finishing">Finishing sign-in…</h1>
<noscript><p class="err">This sign-in response carries its parameters after #, which only a script can read: allow JavaScript for this page, or paste the whole address into the terminal (opsctl login --no-browser).</p></noscript>
<script nonce="${escapeHtml(nonce)}">${script}</script>`,
  );
}

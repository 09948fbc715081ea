/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  const text =
    value === undefined || value === null
      ? ''
      : typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
          ? String(value)
          : (JSON.stringify(value) ?? '');
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small self-contained HTML page (no scripts, no external resources). Every value must be escaped by the caller. */
export function htmlPage(title: string, bodyHtml: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}.err{color:#b00020}.muted{color:#666}code{background:#f3f3f3;padding:0 .2em}
label{display:block;margin:.3rem 0}fieldset{border:1px solid #ddd;margin:1rem 0}button{font-size:1rem;margin-right:.5rem;padding:.4rem 1rem}</style>
</head><body>
${bodyHtml}
</body></html>
`;
}

/** The page the loopback listener shows the browser: success or the error, every value escaped. */
export function resultPage(ok: boolean, title: string, lines: string[]): string {
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

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
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

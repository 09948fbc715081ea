// Small self-contained HTML pages (the mock's consent, device and error pages; the CLI's loopback result page), every value escaped.

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

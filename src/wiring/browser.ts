/** Opens a URL in the system browser with `open`. Never throws: false means "could not", and the caller prints the URL. */
export async function openInBrowser(url: string): Promise<boolean> {
  try {
    const { default: open } = await import('open');
    const child = await open(url, { wait: false });
    return await new Promise<boolean>((resolve) => {
      child.once('error', () => resolve(false));
      child.once('spawn', () => resolve(true));
      setTimeout(() => resolve(true), 500).unref();
    });
  } catch {
    return false;
  }
}

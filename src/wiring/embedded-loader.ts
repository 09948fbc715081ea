/** wiring/embedded.ts (the embedded mock's adapter), loaded on first use and then known synchronously. */
let loaded: typeof import('./embedded.js') | undefined;

export async function loadEmbedded(): Promise<typeof import('./embedded.js')> {
  return (loaded ??= await import('./embedded.js'));
}

/** The adapter when something in this process loaded it; undefined means the embedded mock never ran. */
export function embeddedIfLoaded(): typeof import('./embedded.js') | undefined {
  return loaded;
}

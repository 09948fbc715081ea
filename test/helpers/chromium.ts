import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { runBin } from './bin.js';
import { requireProgram } from './e2e.js';

/** Debian's Chromium; playwright-core drives it and never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** True when Chromium is installed; otherwise a loud skip notice (or a failure under OPSCTL_REQUIRE_E2E=1). */
export function requireChromium(): boolean {
  return requireProgram('chromium', CHROMIUM);
}

/** Headless, no sandbox (containers), and nothing that talks to the network on its own. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Runs `fn` with a page of a fresh Chromium profile (a temporary directory, removed afterwards), and
 * closes the browser however `fn` ends.
 */
export async function withChromiumPage<T>(fn: (page: Page) => Promise<T>): Promise<T> {
  const { chromium } = await import('playwright-core');
  const profileDir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-chromium-profile-'));
  try {
    const browser = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = browser.pages()[0] ?? (await browser.newPage());
      return await fn(page);
    } finally {
      await browser.close();
    }
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}

/**
 * One Chromium for a test file's pages (a launch costs about a second of CPU): `page(fn)` runs `fn` with a page
 * of a fresh browser context (its own cookies, storage and cache, as a fresh profile has), closed however `fn`
 * ends; `close()` in afterAll.
 */
export function chromiumSession(): { page<T>(fn: (page: Page) => Promise<T>): Promise<T>; close(): Promise<void> } {
  let browser: Promise<Browser> | undefined;
  return {
    async page(fn) {
      browser ??= import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }));
      const context = await (await browser).newContext();
      try {
        return await fn(await context.newPage());
      } finally {
        await context.close();
      }
    },
    async close() {
      if (browser) await (await browser).close();
    },
  };
}

/** The authorization URL a `opsctl login --no-browser` child prints on stderr (first match of `pattern`, group 1). */
export function authorizationUrl(child: ReturnType<typeof runBin>, pattern: RegExp): Promise<string> {
  let stderr = '';
  return new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      const m = pattern.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void child.then((r) => reject(new Error(`login exited ${r.exitCode} before printing a URL: ${stderr}`)));
  });
}

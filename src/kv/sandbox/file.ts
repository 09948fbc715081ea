/** Where the sandbox's record lives and how it is read: light, for every kv verb whose default cluster it is. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxSpec } from '../cluster/cluster-file.js';

export function sandboxDir(dataDir: string): string {
  return join(dataDir, 'kv', 'sandbox');
}

export function sandboxFile(dataDir: string): string {
  return join(sandboxDir(dataDir), 'sandbox.json');
}

export function loadSandbox(dataDir: string): SandboxSpec | undefined {
  const f = sandboxFile(dataDir);
  if (!existsSync(f)) return undefined;
  return JSON.parse(readFileSync(f, 'utf8')) as SandboxSpec;
}

import { createHash, randomBytes } from 'node:crypto';

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
export const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

/** A fresh verifier: 32 random bytes, base64url (43 characters of A-Z a-z 0-9 - _). */
export function createVerifier(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** The S256 challenge: base64url (no padding) of SHA-256 over the ASCII verifier. */
export function challengeS256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A random `state` for CSRF protection (128 bits). */
export function createState(): string {
  return randomBytes(16).toString('base64url');
}

export interface Pkce {
  verifier: string;
  challenge: string;
  method: 'S256';
}

export function createPkce(): Pkce {
  const verifier = createVerifier();
  return { verifier, challenge: challengeS256(verifier), method: 'S256' };
}

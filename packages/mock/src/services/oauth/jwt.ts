import { createPrivateKey, generateKeyPairSync, randomBytes, sign, type JsonWebKey } from 'node:crypto';
import type { MockState } from '../../store.js';
import { oauth, storedField } from './tokens.js';
import type { SigningKey } from './slice-types.js';
export type { SigningKey } from './slice-types.js';

export function signingKey(state: MockState): SigningKey {
  const stored = storedField(state, 'signing');
  if (stored) return stored;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key: SigningKey = {
    kid: randomBytes(8).toString('hex'),
    private_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    public_jwk: publicKey.export({ format: 'jwk' }),
  };
  oauth(state).signing = key;
  return key;
}

/** The JWKS document (`/oauth2/v3/certs`). */
export function jwks(key: SigningKey | undefined): { keys: JsonWebKey[] } {
  return { keys: key ? [{ ...key.public_jwk, kid: key.kid, use: 'sig', alg: 'RS256' }] : [] };
}

export function signJwt(key: SigningKey, claims: Record<string, unknown>): string {
  const header = { alg: 'RS256', kid: key.kid, typ: 'JWT' };
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc(header)}.${enc(claims)}`;
  const signature = sign('sha256', Buffer.from(input), createPrivateKey(key.private_pem)).toString('base64url');
  return `${input}.${signature}`;
}

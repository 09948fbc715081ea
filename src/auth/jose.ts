// The parts of jose opsctl uses, imported by name so the bundle carries only these (a dynamic
// import('jose') would keep the whole library). Loaded only when an ID token must be checked.
export { createLocalJWKSet, errors, jwtVerify } from 'jose';

// oidc-provider ships no type declarations: the little the test helper uses.
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): RequestListener;
  }
}

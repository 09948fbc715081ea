declare const __OPSCTL_VERSION__: string;

/** opsctl's version, from package.json at build time (the tests' define too). */
export const VERSION = typeof __OPSCTL_VERSION__ === 'string' ? __OPSCTL_VERSION__ : '0.0.0-dev';

import { statSync } from 'node:fs';

/**
 * How opsctl reaches the members of one cluster: TLS client settings and etcd credentials. Paths
 * are kept (etcdctl gets them as flags); the file contents are read once, by the session (session.ts).
 */
export interface KvTls {
  /** CA bundle that signed the members' server certificates (etcdctl --cacert). */
  cacert?: string;
  /** Client certificate and key (etcdctl --cert / --key). */
  cert?: string;
  key?: string;
  /** Accept any server certificate (etcdctl --insecure-skip-tls-verify). */
  insecureSkipVerify?: boolean;
}

export interface KvCredentials {
  user: string;
  password: string;
}

export interface KvConnection {
  tls?: KvTls;
  auth?: KvCredentials;
  /** How long making a connection may take (etcdctl --dial-timeout); unset: the request's deadline alone. */
  dialTimeoutMs?: number;
}

/** A warning when a private key file can be read by group or others (as ssh warns). */
export function keyFileWarning(path: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  return `warning: the key file ${path} is readable by ${mode & 0o070 ? 'group' : ''}${mode & 0o070 && mode & 0o007 ? ' and ' : ''}${mode & 0o007 ? 'others' : ''} (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): chmod 600 ${path}`;
}

/**
 * What a TLS failure means, and the flag that fixes it; undefined when `err` is not one. Node's
 * codes: certificate verification (OpenSSL's names), host name checks, and alerts the server sent
 * (a refused client certificate).
 */
export function explainTlsError(
  err: NodeJS.ErrnoException,
  endpoint: string,
  { hasClientCert }: { hasClientCert: boolean },
): { message: string; hint: string; code: string } | undefined {
  const code = err.code ?? '';
  const host = (() => {
    try {
      return new URL(endpoint).hostname;
    } catch {
      return endpoint;
    }
  })();
  if (
    [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'UNABLE_TO_GET_ISSUER_CERT',
      'CERT_UNTRUSTED',
    ].includes(code)
  ) {
    return {
      code: 'tls_unknown_ca',
      message: `${endpoint}: the server certificate is signed by an unknown CA (${code})`,
      hint: "pass the CA bundle that signed the members' certificates: --cacert FILE (or tls.cacert in the cluster file, OPSCTL_KV_CACERT)",
    };
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return {
      code: 'tls_expired',
      message: `${endpoint}: the server certificate ${code === 'CERT_HAS_EXPIRED' ? 'has expired' : 'is not valid yet'}`,
      hint: "renew the member's certificate (check the clocks too); --insecure-skip-tls-verify skips the check, at the cost of trusting anyone",
    };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = (err as { cert?: { subjectaltname?: string; subject?: { CN?: string } } }).cert;
    const valid = names?.subjectaltname ?? (names?.subject?.CN ? `CN ${names.subject.CN}` : err.message);
    return {
      code: 'tls_wrong_host',
      message: `${endpoint}: the server certificate is not valid for ${host} (it names ${valid})`,
      hint: 'use the host name or address the certificate names in --endpoints (or the cluster file), or reissue the certificate with this one among its names',
    };
  }
  if (
    /ALERT_CERTIFICATE_REQUIRED|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_CERTIFICATE_UNKNOWN|ALERT_CERTIFICATE_EXPIRED|ALERT_HANDSHAKE_FAILURE|ALERT_ACCESS_DENIED|ALERT_UNSUPPORTED_CERTIFICATE/.test(
      code,
    )
  ) {
    const none = /CERTIFICATE_REQUIRED/.test(code) || (/HANDSHAKE_FAILURE/.test(code) && !hasClientCert);
    return {
      code: 'tls_client_cert_refused',
      message: `${endpoint}: the server refused ${none ? 'to talk without a client certificate' : 'the client certificate'} (${code})`,
      hint: none
        ? 'pass a client certificate the members trust: --cert FILE --key FILE (or tls.cert/tls.key, OPSCTL_KV_CERT/OPSCTL_KV_KEY)'
        : 'pass a client certificate signed by the CA the members trust (--trusted-ca-file on the member): --cert FILE --key FILE',
    };
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') {
    return {
      code: 'tls_not_tls',
      message: `${endpoint}: the member does not speak TLS on this port (${code})`,
      hint: `write the endpoint as http://${new URL(endpoint).host}`,
    };
  }
  if (/^ERR_SSL_|^ERR_TLS_|^ERR_OSSL_/.test(code)) {
    return { code: 'tls', message: `${endpoint}: TLS failed (${code}: ${err.message})`, hint: 'check --cacert, --cert and --key' };
  }
  return undefined;
}

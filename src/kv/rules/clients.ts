/**
 * What each hop changes for the applications that talk to the cluster, from each version's upgrade
 * guide and changelog, and the guides' advice to try it in staging first. Shown on the plan before
 * anything stops, kept in the report, and listed in docs/kv-upgrade.md.
 */

export const STAGING_ADVICE =
  'test the services that depend on etcd against a staging cluster on the target version first (the guides: "test dependent services in staging")';

/** The client-visible changes of the hop that reaches `target` (a minor of the ladder's table above its first). */
export const CLIENT_CHANGES: ReadonlyMap<string, readonly string[]> = new Map([
  [
    '3.3',
    [
      'clientv3: the raw gRPC wrapper constructors (NewKVFromKVClient, NewClusterFromClusterClient, NewLeaseFromLeaseClient, NewMaintenanceFromMaintenanceClient, NewWatchFromWatchClient) take the *Client as an extra argument',
      'embed: Config.ServerConfig is a value, not a pointer; the logger is grpclog.LoggerV2; context imports move to the standard library "context"; gRPC 1.7.5',
      'message sizes: the client sends at most 2 MiB by default (MaxCallSendMsgSize) and receives up to math.MaxInt32 (MaxCallRecvMsgSize); the server still refuses requests over --max-request-bytes (1.5 MiB)',
      'from 3.3.14 a client must pass grpc.WithBlock() to wait for the connection at dial, and should test clientv3.IsConnCanceled(err) instead of ErrClientConnClosing (deprecated with gRPC 1.10)',
      'container images are published at gcr.io/etcd-development/etcd as the primary registry',
    ],
  ],
  [
    '3.4',
    [
      "the Go client moves to go.etcd.io/etcd/clientv3 (from github.com/coreos/etcd/clientv3) and its balancer is gRPC's own: retries and endpoint switching behave differently",
      'the JSON gateway serves /v3 (the /v3beta prefix is deprecated, gone in 3.5); etcdctl speaks the v3 API by default (ETCDCTL_API=3)',
      'the v2 API is off by default (--enable-v2=false): v2 clients fail unless it is turned on',
    ],
  ],
  [
    '3.5',
    [
      'the Go client module is go.etcd.io/etcd/client/v3 (the go.etcd.io/etcd/clientv3 path stops at 3.4)',
      'the /v3beta gateway prefix is removed: HTTP clients must call /v3',
      'the v2 API and v2 discovery are deprecated (v2 clients should move to v3 before 3.6)',
    ],
  ],
  [
    '3.6',
    [
      'the v2 store and the v2 API are removed (--enable-v2 is gone): every client must use v3',
      'etcdctl snapshot restore and status move to etcdutl; experimental flags become --feature-gates',
      'a 3.6 cluster can go back only to 3.5 (kv downgrade): clients must not rely on a 3.6-only call until the window closes',
    ],
  ],
  [
    '3.7',
    [
      'the Go client/v2 package and v2 discovery are removed: a client or a bootstrap still on them must move to client/v3 and --discovery-endpoints',
      'the Go modules use google.golang.org/protobuf instead of gogo/protobuf, and go-grpc-middleware v2 interceptors: code that embeds etcd or imports its internal packages must be rebuilt against 3.7',
      'etcdctl regroups its commands and hides the global flags in --help (scripts keep working; read etcdctl --help again); AuthStatus answers without authentication; Unix socket endpoints are accepted',
      'a 3.7 cluster can go back only to 3.6 (kv downgrade): clients must not rely on a 3.7-only call until the window closes',
    ],
  ],
]);

/** The plan's lines for the hops from `source` to `target` (each minor passed through), indented. */
export function clientChecklist(source: string, target: string): string[] {
  const minors = [...CLIENT_CHANGES.keys()].filter((m) => cmp(m, source) > 0 && cmp(m, target) <= 0);
  if (!minors.length) return [];
  return [
    `  clients: ${STAGING_ADVICE}; what ${minors.length > 1 ? 'these hops change' : 'this hop changes'} for them:`,
    ...minors.flatMap((m) => CLIENT_CHANGES.get(m)!.map((c) => `    - ${m}: ${c}`)),
  ];
}

const cmp = (a: string, b: string) => Number(a.split('.')[1]) - Number(b.split('.')[1]);

// The flag sets of the verbs that reach a cluster and nothing more (kv get, put, status, endpoint health…), apart from
// lib/flags.ts: that one builds the command driver's template flags from its table (kv/cluster/cluster-file.ts) when
// loaded, which a verb that stops and starts no member never needs (lib/flags.ts re-exports these).

/** Flags that find the cluster and reach it (every kv verb but sandbox, release, backups and snapshot status). */
export const cluster = {
  endpoints: { type: 'string', value: 'urls', help: 'client URLs, comma-separated (env ETCDCTL_ENDPOINTS; default: the sandbox)' },
  cluster: { type: 'string', value: 'file', home: true, help: 'a cluster file (YAML or JSON): members and a driver' },
  requestTimeout: { type: 'string', value: 'duration', help: 'timeout of one request to a member (default 3s; env ETCDCTL_COMMAND_TIMEOUT)' },
  commandTimeout: { type: 'string', value: 'duration', hidden: true, sameAs: 'requestTimeout', help: "etcdctl's name of --request-timeout" },
  dialTimeout: {
    type: 'string',
    value: 'duration',
    help: 'how long connecting to a member may take (default: the request timeout; env ETCDCTL_DIAL_TIMEOUT)',
  },
  cacert: {
    type: 'string',
    value: 'file',
    home: true,
    help: "TLS: the CA bundle that signed the members' certificates (env OPSCTL_KV_CACERT, ETCDCTL_CACERT)",
  },
  cert: { type: 'string', value: 'file', home: true, help: 'TLS: client certificate (env OPSCTL_KV_CERT, ETCDCTL_CERT)' },
  key: { type: 'string', value: 'file', home: true, help: 'TLS: client key (env OPSCTL_KV_KEY, ETCDCTL_KEY)' },
  insecureSkipTlsVerify: { type: 'boolean', help: "TLS: do not check the members' certificates (warned about)" },
  user: {
    type: 'string',
    value: 'name',
    help: 'etcd auth: the user (env OPSCTL_KV_USER, ETCDCTL_USER); the password from the prompt, OPSCTL_KV_PASSWORD, ETCDCTL_PASSWORD or --password-file',
  },
  passwordFile: { type: 'string', value: 'file', home: true, help: 'etcd auth: a file whose first line is the password' },
} as const;

/** `-w` of the etcdctl-like verbs: etcdctl's own lines where scripts parse them. */
export const writeOut = {
  type: 'string',
  short: 'w',
  value: 'format',
  choices: ['table', 'simple', 'json'],
  help: "table (a terminal's default; tab-separated when piped), simple: etcdctl's lines, json: as --json; member list and endpoint status print etcdctl's own json and boxed table",
} as const;

/** The flags of the etcdctl-like verbs: the cluster's and -w. */
export const etcdctlLike = { ...cluster, writeOut } as const;

/**
 * The flags of the verbs that act on each member (endpoint health|status|hashkv, defrag): etcdctl's
 * `--cluster` alone (every member of the cluster's own member list, not only the endpoints given), and
 * `--cluster FILE` still a cluster file, so an operator's etcdctl habit works as typed.
 */
export const perMember = {
  ...etcdctlLike,
  cluster: {
    ...cluster.cluster,
    optional: true,
    help: "a cluster file (YAML or JSON); alone, as etcdctl's --cluster: every member of the cluster's own member list",
  },
  memberList: { type: 'boolean', help: "every member of the cluster's member list (the same as --cluster alone)" },
} as const;

import { syntaxErrorText } from '../../../core/syntax-error.js';
import { z } from 'zod';
import { UsageError } from '../../../core/errors.js';
import { DRIVER_TEMPLATES, hostProblem, TEMPLATE_ROWS, type ClusterSpec, type MemberSpec } from '../../../kv/cluster/cluster-file.js';
import { driverOfEntry } from '../../../kv/drivers/entry.js';
import type { FileConnection } from './connection.js';
import { normalizeEndpoint } from './endpoint.js';
import { parseYaml } from '../../../core/yaml.js';

const Member = z.object({
  name: z.string().min(1),
  endpoint: z.string().min(1),
  host: z.string().min(1).optional(),
  /** kv restore: the member's peer URL (else read from the cluster's member list). */
  peerUrl: z.string().min(1).optional(),
  /** The container driver: the member's container (else etcd-NAME). */
  container: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a container name is letters, digits, "_", "." and "-", starting with a letter or digit')
    .optional(),
});
const Tls = z.object({
  cacert: z.string().min(1).optional(),
  cert: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  insecureSkipTlsVerify: z.boolean().optional(),
});
const Auth = z.object({ user: z.string().min(1), passwordFile: z.string().min(1).optional() }).strict();
type Rows = typeof DRIVER_TEMPLATES;
/** driver.KEY of a command driver per row of the template table: stop, start and running required. */
const templateFields = Object.fromEntries(TEMPLATE_ROWS.map(([key, row]) => [key, row.required ? z.string().min(1) : z.string().min(1).optional()])) as {
  [K in keyof Rows]: Rows[K] extends { required: true } ? z.ZodString : z.ZodOptional<z.ZodString>;
};
const File = z.object({
  members: z.array(Member).min(1),
  tls: Tls.strict().optional(),
  auth: Auth.optional(),
  driver: z
    .discriminatedUnion('type', [
      z.object({
        type: z.literal('command'),
        ...templateFields,
        // the etcd binary on the hosts per target minor ("3.6": /opt/etcd-3.6/etcd): the trials' and the start check's
        bins: z.record(z.string().regex(/^3\.\d+$/, 'a minor such as "3.6"'), z.string().min(1)).optional(),
      }),
      z
        .object({
          type: z.literal('systemd'),
          unit: z.string().min(1).optional(),
          units: z.record(z.string(), z.string().min(1)).optional(),
          bins: z.record(z.string(), z.string().min(1)).optional(),
          binLink: z.string().min(1).optional(),
          ssh: z.string().min(1).optional(),
          sudo: z.boolean().optional(),
          configFile: z.string().min(1).optional(),
          dataDir: z.string().min(1).optional(),
          etcdctl: z.string().min(1).optional(),
          etcdutl: z.string().min(1).optional(),
        })
        .strict(),
      z
        .object({
          type: z.literal('container'),
          engine: z.string().min(1).optional(),
          onHost: z.string().min(1).optional(),
          images: z.record(z.string().regex(/^3\.\d+$/, 'a minor such as "3.6"'), z.string().min(1)),
        })
        .strict(),
    ])
    .optional(),
});

/**
 * A cluster file (YAML or JSON):
 *   members: [{name, endpoint, host?}]
 *   driver: {type: command, stop: "ssh {host} sudo systemctl stop etcd", start: …, running: …, v2Size?: …, backup?: …, space?: …, config?: …,
 *            trial?: "ssh {host} sudo sh -s", bins?: {"3.6": /opt/etcd-3.6/etcd}}
 *   tls: {cacert?, cert?, key?, insecureSkipTlsVerify?}   (paths relative to the file)
 *   auth: {user, passwordFile?}                            (never the password itself)
 */
export async function parseClusterFile(text: string, path: string): Promise<{ members: MemberSpec[]; driver?: ClusterSpec['driver']; conn: FileConnection }> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    try {
      raw = await parseYaml(text);
    } catch (err) {
      throw new UsageError(`--cluster ${path}: neither JSON nor YAML: ${syntaxErrorText(err)}`, { field: '--cluster' });
    }
  }
  const r = File.safeParse(raw);
  if (!r.success) {
    // a failed parse carries at least one issue: the first is reported
    const issue = r.error.issues[0];
    const problem = issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : r.error.message;
    throw new UsageError(`--cluster ${path}: ${problem}`, {
      field: '--cluster',
      hint: 'a cluster file has members: [{name, endpoint, host}] and optionally driver: {type: command, stop, start, running} or {type: systemd, unit}, tls: {cacert, cert, key}, auth: {user}',
    });
  }
  const seen = new Set<string>();
  for (const [i, m] of r.data.members.entries()) {
    if (seen.has(m.name)) {
      throw new UsageError(`--cluster ${path}: members.${i}.name: "${m.name}" is listed twice`, {
        field: '--cluster',
        hint: 'give each member its etcd name (etcd --name) once; nothing was changed',
      });
    }
    seen.add(m.name);
    // A host is only ever the destination of a command (ssh): never an option, never shell text.
    const hp = m.host === undefined ? undefined : hostProblem(m.host);
    if (hp) {
      throw new UsageError(`--cluster ${path}: members.${i}.host: ${JSON.stringify(m.host)} (member ${JSON.stringify(m.name)}): ${hp}`, {
        field: '--cluster',
        hint: "give the host name or address ssh connects to (ssh options belong in the driver's ssh/command templates); nothing was changed",
      });
    }
  }
  const driver = driverOfEntry(r.data.driver, path);
  return {
    members: r.data.members.map((m) => ({ ...m, endpoint: normalizeEndpoint(m.endpoint, `--cluster ${path}: members.endpoint`) })),
    driver,
    conn: { tls: r.data.tls, auth: r.data.auth },
  };
}

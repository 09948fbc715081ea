/**
 * A container engine faked at its command boundary, for the container driver's unit tests: podman 4.3's
 * inspect answers, its volumes, the files `cat` reads on its host; no process is started.
 */
import { COPY_SCRIPT, RESTORE_SCRIPT, SPACE_SCRIPT } from '../../src/kv/containers/backup.js';

export const VOLUMES = '/var/lib/containers/storage/volumes';
const ID = '49e6887078f480dd82950c3e1afa542dd450a113657a6b8ad6b22856ec71aeb1';
export type Reply = { stdout: string; stderr: string; exitCode: number };
export const ok = (stdout = ''): Reply => ({ stdout, stderr: '', exitCode: 0 });

/** A member container as podman 4.3's inspect shows it (stopped), with `cmd` and `mounts` of the test's own. */
export function container(o: { name?: string; cmd: string[]; env?: string[]; mounts: object[]; workdir?: string; created?: string }) {
  return {
    Id: o.name ? `${o.name.length}${ID.slice(1)}` : ID,
    Created: o.created ?? '2026-11-27T16:00:00Z',
    Name: o.name ?? 'etcd-c1',
    ImageName: 'localhost/etcd:v3.5.35',
    Image: '95f3da7cc22a',
    State: { Running: false, ExitCode: 0 },
    Mounts: o.mounts,
    Config: { Cmd: o.cmd, Env: o.env ?? [], Entrypoint: '', ...(o.workdir ? { WorkingDir: o.workdir } : {}) },
    HostConfig: { NetworkMode: 'host' },
  };
}
export const volume = (name: string, destination: string) => ({
  Type: 'volume',
  Name: name,
  Source: `${VOLUMES}/${name}/_data`,
  Destination: destination,
  RW: true,
});
export const bind = (source: string, destination: string) => ({ Type: 'bind', Source: source, Destination: destination, RW: true });

/**
 * An engine faked at its command boundary (no process is started): the containers and volumes it has, the files
 * `cat` reads on its host; every call recorded. The copy, put-back and space scripts answer as they would.
 */
export function fakeEngine(o: {
  containers: Array<ReturnType<typeof container>>;
  volumes?: string[];
  files?: Record<string, string>;
  program?: string;
  /** Answers of the test's own, asked first. */
  also?: (argv: string[]) => Reply | undefined;
}) {
  const calls: string[][] = [];
  const volumes = new Map((o.volumes ?? []).map((v) => [v, `${VOLUMES}/${v}/_data`]));
  const program = o.program ?? 'podman';
  const answer = ([file, ...a]: string[]): Reply => {
    const own = o.also?.([file!, ...a]);
    if (own) return own;
    if (file === program && a[0] === 'container' && a[1] === 'inspect') {
      const c = o.containers.find((x) => x.Name === a[2]);
      return c ? ok(JSON.stringify([c])) : { stdout: '', stderr: `Error: no such container ${a[2]}`, exitCode: 125 };
    }
    if (file === program && a[0] === 'ps') return ok(o.containers.map((c) => `${c.Name}\t${c.Created}`).join('\n'));
    if (file === program && a[0] === 'volume' && a[1] === 'inspect') {
      const mp = volumes.get(a[2]!);
      return mp ? ok(JSON.stringify([{ Name: a[2], Mountpoint: mp }])) : { stdout: '', stderr: `Error: no such volume ${a[2]}`, exitCode: 125 };
    }
    if (file === program && a[0] === 'volume' && a[1] === 'create') {
      const name = a[a.length - 1]!;
      volumes.set(name, `${VOLUMES}/${name}/_data`);
      return ok(name);
    }
    if (file === 'cat') {
      const text = o.files?.[a[1]!];
      return text === undefined ? { stdout: '', stderr: `cat: ${a[1]}: No such file or directory`, exitCode: 1 } : ok(text);
    }
    if (file === 'sh' && a[1] === COPY_SCRIPT) return ok('opsctl-copied: 81920\n');
    if (file === 'sh' && a[1] === RESTORE_SCRIPT) return ok();
    if (file === 'sh' && a[1] === SPACE_SCRIPT)
      return ok(`120\t${a[3]}\nFilesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 1000000 500000 400000 56% /\n`);
    if (file === 'du' && a[0] === '-sk') return ok(`300\t${a[2]}\n`);
    return { stdout: '', stderr: `unexpected ${[file, ...a].join(' ')}`, exitCode: 99 };
  };
  const run = (file: string, args: string[]) => {
    calls.push([file, ...args]);
    return Promise.resolve({ ...answer([file, ...args]), timedOut: false });
  };
  return { calls, volumes, run: run as unknown as typeof import('execa').execa };
}

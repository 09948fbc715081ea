import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListMultipartUploadsCommand, ListObjectsV2Command, ListPartsCommand } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { until } from '../helpers/kv.js';
import { haveS3Server, READER, ROOT, startS3Server, type S3Server } from '../helpers/s3-server.js';
import { startS3Proxy } from '../helpers/s3-proxy.js';
import { PtySession } from '../helpers/pty.js';
import { deadlineScale } from '../helpers/deadline.js';

interface Row {
  url: string;
  bytes: number;
  sha256: string;
  revision: string;
}

/**
 * Off-host snapshots through the built binary, against a real S3-compatible server (versitygw, started
 * here on a loopback port) and a sandbox of simulated members: save/list/prune/restore with the hashes
 * checked on the server's own copy; the server killed mid-upload; a bucket the identity may not write;
 * refused credentials.
 */
describe.runIf(haveS3Server())('kv snapshots off-host in S3 (real versitygw, built binary, simulated sandbox)', () => {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-s3-');
  let s3: S3Server;
  let c: SimulatedTestCluster | undefined;
  const opsctl = (args: string[], env: Record<string, string> = {}) => runBin(args, { env: { OPSCTL_CONFIG_DIR: dir, ...s3.env, ...env }, timeout: 180_000 });
  const ok = async (...args: string[]) => {
    const r = await opsctl(args);
    expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
    return r;
  };
  /** A setup put: simulated members busy with 1 MiB values on a loaded machine may be between leaders ("no leader": not
   *  proposed) or past their commit deadline ("request timed out": maybe applied); etcdctl retries neither, and the same
   *  value put again is the same state, so the put is tried again until the cluster takes it. */
  const put = async (key: string, file: string) => {
    let r = await opsctl(['kv', 'put', key, '--file', file]);
    await until(
      async () => {
        if (r.exitCode === 0 || !/no leader|request timed out/.test(String(r.stderr))) return true;
        r = await opsctl(['kv', 'put', key, '--file', file]);
        return false;
      },
      120_000,
      `a leader to take ${key}`,
    );
    expect(r.exitCode, `kv put ${key}: ${String(r.stderr)}`).toBe(0);
  };
  const list = async (url: string): Promise<Row[]> => JSON.parse(String((await ok('kv', 'backups', 'list', '--from', url, '--json')).stdout)) as Row[];
  const objectHash = (bucket: string, key: string) => s3.objectHash(bucket, key);

  beforeAll(async () => {
    s3 = await startS3Server();
    await s3.bucket('backups');
    await s3.readOnlyBucket('readonly');
    // heartbeat 200 ms (elections after 2 s, not the framework's 0.5 s): on CI's loaded 2 cores, members starved for half a
    // second lost their leader between tests, and a save found "no healthy member"; what these tests prove is the store's part
    c = await startCluster({ members: 'simulated', size: 3, version: '3.4', configDir: dir, extra: ['--heartbeat', '200ms'] });
  }, 120_000);
  afterAll(async () => {
    await c?.destroy();
    await s3?.stop();
    cleanup();
  }, 120_000);

  // the upgrades first, on a fresh sandbox whose members agree (their KV hashes are compared before any stop)
  const pids = () => {
    const spec = JSON.parse(readFileSync(join(dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8')) as { members: { pidFile: string }[] };
    return spec.members.map((m) => readFileSync(m.pidFile, 'utf8').trim());
  };

  it('kv upgrade --backup-to a bucket the identity may not write: refused before any member stops (same pids, no journal)', async () => {
    const reader = { AWS_ACCESS_KEY_ID: READER.accessKeyId, AWS_SECRET_ACCESS_KEY: READER.secretAccessKey };
    const before = pids();
    const r = await opsctl(['kv', 'upgrade', '--to', '3.5', '--backup-to', 's3://readonly/ladder', '--yes'], reader);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain('cannot write to s3://readonly/ladder/: access denied');
    expect(pids()).toEqual(before);
    expect((await opsctl(['kv', 'version', '--json'])).stdout).not.toContain('3.5.');

    const journals = join(dir, 'data', 'kv', 'journals');
    expect(existsSync(journals) ? readdirSync(journals).filter((f) => f.endsWith('.json')) : []).toEqual([]);
  }, 60_000);

  it('kv upgrade --backup-to a store that stops answering once the upload has begun: ends non-zero within --snapshot-timeout, no member stopped, nothing listed', async () => {
    const proxy = await startS3Proxy(s3.url, { stallAt: { part: 1 } });
    const before = pids();
    const started = Date.now();
    let r;
    try {
      r = await opsctl(['kv', 'upgrade', '--to', '3.5', '--backup-to', 's3://backups/stalled', '--snapshot-timeout', '40s', '--s3-timeout', '3s', '--yes'], {
        AWS_ENDPOINT_URL: proxy.url,
      });
    } finally {
      await proxy.close();
    }
    const took = Date.now() - started;
    if (process.env.S3_TIMING) console.log(`upgrade stall: ${took} ms from start, ${Date.now() - proxy.stalledAt()!} ms from the stall`);
    const err = String(r.stderr);
    // an upgrade halted before the member's stop: 3, as `opsctl help exit-codes` says of a halted upgrade (re-run to resume)
    expect(r.exitCode, err).toBe(3);
    expect(proxy.stalledAt()).toBeDefined();
    expect(took).toBeLessThan(40_000 + 30_000 * deadlineScale());
    expect(err).toMatch(/upload of s3:\/\/backups\/stalled\/\S+\.db failed \(nothing listed; the abort of its multipart upload was not confirmed/);
    expect(err).toContain('--s3-timeout');
    expect(pids()).toEqual(before);
    expect(await list('s3://backups/stalled')).toEqual([]);
    await ok('kv', 'backups', 'prune', '--from', 's3://backups/stalled', '--stale-after', '0s', '--yes');
    // the halted run is rolled back (nothing was stopped)
    const back = await opsctl(['kv', 'rollback', '--yes']);
    expect([0, 1]).toContain(back.exitCode);
  }, 240_000);

  it('kv upgrade --backup-to: an upload the store refuses after the probe passed halts before the stop (same pids)', async () => {
    await s3.probeOnlyBucket('probeonly');
    const reader = { AWS_ACCESS_KEY_ID: READER.accessKeyId, AWS_SECRET_ACCESS_KEY: READER.secretAccessKey };
    const before = pids();
    const r = await opsctl(['kv', 'upgrade', '--to', '3.5', '--backup-to', 's3://probeonly/ladder', '--yes'], reader);
    expect(r.exitCode, String(r.stderr)).not.toBe(0);
    expect(String(r.stderr)).toMatch(/upload of s3:\/\/probeonly\/ladder\/\S+\.db failed .*access denied/);
    expect(pids()).toEqual(before);
    const listed = await opsctl(['kv', 'backups', 'list', '--from', 's3://probeonly/ladder', '--json'], reader);
    expect(JSON.parse(String(listed.stdout))).toEqual([]);
    // the halted run can be rolled back (nothing was stopped)
    const back = await opsctl(['kv', 'rollback', '--yes']);
    expect([0, 1]).toContain(back.exitCode);
  }, 120_000);

  it('a server killed mid-upload: non-zero exit, and nothing half-written is listed as a backup', async () => {
    // ~16 MiB of values: a snapshot of several 5 MiB parts, so the upload is a multipart one (written four at a time)
    for (let i = 0; i < 16; i += 4) {
      await Promise.all(
        [i, i + 1, i + 2, i + 3].map((k) => {
          const value = join(dir, `value-${k}.bin`);
          writeFileSync(
            value,
            randomBytes(1024 * 1024)
              .toString('base64')
              .slice(0, 1024 * 1024),
          );
          return put(`big-${k}`, value);
        }),
      );
    }
    const before = await list('s3://backups/etcd/prod');
    const saving = execa(process.execPath, [BIN, 'kv', 'snapshot', 'save', '--to', 's3://backups/etcd/prod'], {
      env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: dir, ...s3.env },
      reject: false,
    });
    await until(
      async () => {
        const u = await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'backups', Prefix: 'etcd/prod/' })).catch(() => undefined);
        const up = u?.Uploads?.[0];
        if (!up) return false;
        const parts = await s3.root.send(new ListPartsCommand({ Bucket: 'backups', Key: up.Key, UploadId: up.UploadId })).catch(() => undefined);
        return (parts?.Parts?.length ?? 0) > 0;
      },
      60_000,
      'a multipart upload with a part on the store',
    );
    await s3.kill();
    const r = await saving;
    expect(r.exitCode, String(r.stderr)).not.toBe(0);
    expect(String(r.stderr)).toMatch(/upload of s3:\/\/backups\/etcd\/prod\/snapshot-.*failed|cannot/);
    await s3.restart();
    expect(await list('s3://backups/etcd/prod')).toEqual(before);
    const objects = (await s3.root.send(new ListObjectsV2Command({ Bucket: 'backups', Prefix: 'etcd/prod/' }))).Contents ?? [];
    expect(objects.filter((o) => o.Key!.endsWith('.db')).map((o) => `s3://backups/${o.Key!}`)).toEqual(before.map((b) => b.url));
    // the upload the dead server could not abort is still open on the store: prune leaves a recent one
    // alone (it may be a save under way) and aborts it once it is older than --stale-after
    const open = async () => (await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'backups', Prefix: 'etcd/prod/' }))).Uploads ?? [];
    expect((await open()).length).toBeGreaterThan(0);
    // kv backups list counts it, not as a backup, naming the prune that removes it
    const shown = await ok('kv', 'backups', 'list', '--from', 's3://backups/etcd/prod');
    expect(String(shown.stderr)).toMatch(
      /also [1-9]\d* unfinished multipart upload\(s\), not backups \(a save under way, or one interrupted; the oldest begun \d{4}-\d\d-\d\dT[^)]*\): opsctl kv backups prune --from s3:\/\/backups\/etcd\/prod --stale-after 24h/,
    );
    const recent = await ok('kv', 'backups', 'prune', '--from', 's3://backups/etcd/prod', '--keep', '100', '--yes', '--json');
    expect((JSON.parse(String(recent.stdout)) as { leftovers: unknown[] }).leftovers).toEqual([]);
    expect((await open()).length).toBeGreaterThan(0);
    const stale = await ok('kv', 'backups', 'prune', '--from', 's3://backups/etcd/prod', '--keep', '100', '--stale-after', '0s', '--yes', '--json');
    const swept = JSON.parse(String(stale.stdout)) as { removed: unknown[]; leftovers: Array<{ kind: string; url: string }> };
    expect(swept.removed).toEqual([]);
    expect(swept.leftovers.map((l) => l.kind)).toContain('upload');
    expect(await open()).toEqual([]);
    expect(await list('s3://backups/etcd/prod')).toEqual(before);
    expect(String((await ok('kv', 'backups', 'list', '--from', 's3://backups/etcd/prod')).stderr)).not.toMatch(/unfinished/);
  }, 240_000);

  it('Ctrl-C on a terminal while a part hangs on the network: exit 130 at once, the part cancelled, the upload aborted, nothing listed', async () => {
    // the ~16 MiB of values of the test above: a snapshot of more than two 5 MiB parts
    const proxy = await startS3Proxy(s3.url, { holdPart: 2 });
    const tmp = join(dir, 'tmp-ctrlc');
    mkdirSync(tmp);
    const run = PtySession.opsctl(['kv', 'snapshot', 'save', '--to', 's3://backups/etcd/ctrlc'], {
      env: { OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', TMPDIR: tmp, ...s3.env, AWS_ENDPOINT_URL: proxy.url },
    });
    try {
      await until(async () => proxy.seen.some((x) => x.endsWith(' part 2')), 60_000, 'part 2 on its way');
      run.ctrlC();
      expect(await run.exitCode()).toBe(130);
      // the snapshot's temporary copy went with it
      expect(readdirSync(tmp)).toEqual([]);
      const key = proxy.seen
        .find((x) => x.endsWith(' part 2'))!
        .split(' ')[1]!
        .replace('/backups/', '');
      expect(proxy.seen, `${proxy.seen.join('\n')}\n${run.text}`).toContain(`DELETE /backups/${key}`);
      const open = await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'backups', Prefix: key }));
      expect(open.Uploads ?? []).toEqual([]);
      expect(await list('s3://backups/etcd/ctrlc')).toEqual([]);
    } finally {
      run.kill();
      await proxy.close();
    }
  }, 120_000);

  it('a store that stops answering mid-upload: kv snapshot save --to exits 1 within --snapshot-timeout, says the abort was not confirmed and how to remove what is left; nothing listed', async () => {
    // the ~16 MiB of values of the tests above: part 2 goes out after the first 5 MiB, and from it on nothing answers
    const proxy = await startS3Proxy(s3.url, { stallAt: { part: 2 } });
    const place = 's3://backups/etcd/stall';
    let r;
    const started = Date.now();
    try {
      r = await opsctl(['kv', 'snapshot', 'save', '--to', place, '--snapshot-timeout', '40s', '--s3-timeout', '3s'], { AWS_ENDPOINT_URL: proxy.url });
    } finally {
      await proxy.close();
    }
    const took = Date.now() - started;
    if (process.env.S3_TIMING) console.log(`save --to stall: ${took} ms from start, ${Date.now() - proxy.stalledAt()!} ms from the stall`);
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    expect(proxy.stalledAt()).toBeDefined();
    // bounded by the deadline (clean-up included), whatever the store does; before, it waited until killed
    expect(took).toBeLessThan(40_000 + 20_000 * deadlineScale());
    expect(err).toMatch(/upload of s3:\/\/backups\/etcd\/stall\/snapshot-\S+\.db failed \(nothing listed; the abort of its multipart upload was not confirmed/);
    expect(err).toMatch(/the store did not answer UploadPart \(part \d+\) within 3s \(--s3-timeout\)/);
    expect(err).toContain(`opsctl kv backups prune --from ${place} --stale-after 0s`);
    expect(err).toMatch(/aws s3api abort-multipart-upload --bucket backups --key etcd\/stall\/snapshot-\S+\.db --upload-id \S+/);
    expect(err).not.toContain('unexpected error');
    // straight to the store: no backup listed; the upload left open is what the message named, and its prune removes it
    expect(await list(place)).toEqual([]);
    const open = async () => (await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'backups', Prefix: 'etcd/stall/' }))).Uploads ?? [];
    expect((await open()).map((u) => u.UploadId)).toEqual([/--upload-id ([^\s;)]+)/.exec(err)![1]]);
    await ok('kv', 'backups', 'prune', '--from', place, '--stale-after', '0s', '--yes');
    expect(await open()).toEqual([]);
  }, 180_000);

  it('an upload given up at its own deadline names it as it is ("not done within 12s (--snapshot-timeout 16s, less the 4s kept to clean up)"), not the whole 16s; exit 1', async () => {
    // every request after the first part's hangs: the part's one attempt ends at the upload's deadline (12 s, its request limit being 12 s too).
    // (12 s, not less: the snapshot's first 5 MiB and the upload's creation must reach the store before it on a busy machine; with
    // 6 s, a CI run's part 1 was still on its way at the deadline, nothing stalled, and the abort was answered.)
    const proxy = await startS3Proxy(s3.url, { stallAt: { part: 1 } });
    const started = Date.now();
    let r;
    try {
      r = await opsctl(['kv', 'snapshot', 'save', '--to', 's3://backups/etcd/words', '--snapshot-timeout', '16s', '--s3-timeout', '12s'], {
        AWS_ENDPOINT_URL: proxy.url,
      });
    } finally {
      await proxy.close();
    }
    const took = Date.now() - started;
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    // (parts go up side by side: whichever stalled part's attempt ends first is the one named)
    expect(proxy.stalledAt(), `the store never saw part 1 before the upload's deadline:\n${err}`).toBeDefined();
    expect(err).toMatch(/UploadPart \(part \d+\): not done within 12s \(--snapshot-timeout 16s, less the 4s kept to clean up\)/);
    expect(err).not.toMatch(/UploadPart \(part \d+\): not done within 16s/);
    // its clean-up, started with less than its least time (5 s) of the 16 s left, gets 5 s and says so
    expect(err).toMatch(/AbortMultipartUpload: not done within 5s \(the clean-up's least time, past the 16s \(--snapshot-timeout\) of the upload\)/);
    expect(took).toBeLessThan(16_000 + 20_000 * deadlineScale());
    expect(await list('s3://backups/etcd/words')).toEqual([]);
    await ok('kv', 'backups', 'prune', '--from', 's3://backups/etcd/words', '--stale-after', '0s', '--yes');
  }, 120_000);

  it(
    'a store whose answer to the completion never comes back: exit 1 saying the object may exist without a manifest and how to remove it; never listed',
    async () => {
      const proxy = await startS3Proxy(s3.url, { stallAt: 'complete' });
      const place = 's3://backups/etcd/completed';
      // (every part goes through before the stalled completion: the whole upload's deadline stretched by the load, so the
      // completion's own --s3-timeout is what ends it; at load 13 the parts took past a 40 s deadline, another path)
      const whole = `${Math.round(40 * deadlineScale())}s`;
      let r;
      try {
        r = await opsctl(['kv', 'snapshot', 'save', '--to', place, '--snapshot-timeout', whole, '--s3-timeout', '3s'], { AWS_ENDPOINT_URL: proxy.url });
      } finally {
        await proxy.close();
      }
      const err = String(r.stderr);
      expect(r.exitCode, err).toBe(1);
      expect(err).toMatch(
        /its completion was sent and the delete of the object was not confirmed \(.*\): s3:\/\/backups\/etcd\/completed\/snapshot-\S+\.db may exist without a manifest/,
      );
      expect(err).toMatch(/aws s3 rm s3:\/\/backups\/etcd\/completed\/snapshot-\S+\.db/);
      // the store did complete it: an object without a manifest, not a backup; kv backups list counts it, prune removes it
      const objects = (await s3.root.send(new ListObjectsV2Command({ Bucket: 'backups', Prefix: 'etcd/completed/' }))).Contents ?? [];
      expect(objects.map((o) => o.Key!.replace(/snapshot-\S+\.db$/, 'X'))).toEqual(['etcd/completed/X']);
      expect(await list(place)).toEqual([]);
      const pruned = await ok('kv', 'backups', 'prune', '--from', place, '--stale-after', '0s', '--yes', '--json');
      expect((JSON.parse(String(pruned.stdout)) as { leftovers: Array<{ kind: string }> }).leftovers.map((l) => l.kind)).toEqual(['object']);
      expect((await s3.root.send(new ListObjectsV2Command({ Bucket: 'backups', Prefix: 'etcd/completed/' }))).Contents ?? []).toEqual([]);
    },
    180_000 * deadlineScale(),
  );

  it('a part changed on its way to the store: refused by its SHA-256 (BadDigest), non-zero exit, nothing listed, no upload left open', async () => {
    const proxy = await startS3Proxy(s3.url, { corruptPart: 1 });
    try {
      const before = await list('s3://backups/etcd/prod');
      const r = await opsctl(['kv', 'snapshot', 'save', '--to', 's3://backups/etcd/prod'], { AWS_ENDPOINT_URL: proxy.url });
      expect(r.exitCode, String(r.stderr)).toBe(1);
      expect(String(r.stderr)).toMatch(/upload of s3:\/\/backups\/etcd\/prod\/snapshot-\S+\.db failed \(multipart upload aborted, nothing listed\): BadDigest/);
      const sent = proxy.seen.find((x) => /^PUT \/backups\/etcd\/prod\/snapshot-\S+\.db part 1$/.test(x));
      expect(sent, proxy.seen.join('\n')).toBeDefined();
      const key = sent!.split(' ')[1]!.replace('/backups/', '');
      expect(await list('s3://backups/etcd/prod')).toEqual(before);
      // its multipart upload aborted (the one the killed server could not abort, above, is another key)
      const open = await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'backups', Prefix: key }));
      expect(open.Uploads ?? []).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('a store that keeps no checksums: the object is read back and hashed before its manifest is written', async () => {
    const proxy = await startS3Proxy(s3.url, { hideChecksums: true });
    try {
      const r = await opsctl(['kv', 'snapshot', 'save', '--to', 's3://backups/etcd/plain', '--json'], { AWS_ENDPOINT_URL: proxy.url });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const out = JSON.parse(String(r.stdout)) as { sha256: string; uploaded: { url: string; verifiedBy: string } };
      expect(out.uploaded.verifiedBy).toBe('read-back');
      const key = out.uploaded.url.replace('s3://backups/', '');
      expect(proxy.seen).toContain(`GET /backups/${key}`);
      expect(await objectHash('backups', key)).toBe(out.sha256);
      expect((await list('s3://backups/etcd/plain')).map((x) => x.url)).toEqual([out.uploaded.url]);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('a TMPDIR that cannot be used (no FILE given): exit 1 naming the directory and the fix, nothing begun on the store', async () => {
    const missing = join(dir, 'no-such-tmp');
    const r = await opsctl(['kv', 'snapshot', 'save', '--to', 's3://backups/etcd/tmpdir'], { TMPDIR: missing });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain(`cannot make a temporary directory for the snapshot in ${missing} (ENOENT)`);
    expect(String(r.stderr)).toContain('set TMPDIR to a directory you can write');
    expect(String(r.stderr)).not.toContain('unexpected error');
    const open = await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'backups', Prefix: 'etcd/tmpdir' }));
    expect(open.Uploads ?? []).toEqual([]);
  }, 60_000);

  it('--stale-after: a bad duration or no bucket named is a usage error (exit 2) naming the flag', async () => {
    const local = await opsctl(['kv', 'backups', 'prune', '--stale-after', '1h', '--yes']);
    expect(local.exitCode).toBe(2);
    expect(String(local.stderr)).toContain('--stale-after applies to a bucket (--from s3://BUCKET/PREFIX)');
    const bad = await opsctl(['kv', 'backups', 'prune', '--from', 's3://backups/etcd/prod', '--stale-after', 'soon', '--yes']);
    expect(bad.exitCode).toBe(2);
    expect(String(bad.stderr)).toContain('--stale-after: "soon" is not a duration');
  }, 60_000);

  it('a bucket the identity may not write is refused before the snapshot is taken, naming the fix', async () => {
    const reader = { AWS_ACCESS_KEY_ID: READER.accessKeyId, AWS_SECRET_ACCESS_KEY: READER.secretAccessKey };
    // the reader may list it
    const listed = await opsctl(['kv', 'backups', 'list', '--from', 's3://readonly/x'], reader);
    expect(listed.exitCode, String(listed.stderr)).toBe(0);
    // it may not list multipart uploads: the backups are listed all the same, and the line says what was not counted
    expect(String(listed.stderr)).toContain(
      'unfinished multipart uploads not counted: cannot list the multipart uploads under s3://readonly/x/: access denied by the store (AccessDenied); counting them needs s3:ListBucketMultipartUploads',
    );
    const r = await opsctl(['kv', 'snapshot', 'save', '--to', 's3://readonly/x', '--debug'], reader);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain('cannot write to s3://readonly/x/: access denied');
    expect(String(r.stderr)).toContain('s3:PutObject');
    expect(String(r.stderr)).not.toContain('/maintenance/snapshot');
    expect(String(r.stdout) + String(r.stderr)).not.toContain(READER.secretAccessKey);
  }, 60_000);

  it('wrong credentials: exit 4 naming where they came from and the fix; the secret never printed', async () => {
    const secret = 'wrong-secret-abcdefghijklmnop';
    const r = await opsctl(['kv', 'snapshot', 'save', '--to', 's3://backups/etcd/prod'], { AWS_SECRET_ACCESS_KEY: secret });
    expect(r.exitCode).toBe(4);
    expect(String(r.stderr)).toContain('AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment');
    expect(String(r.stderr)).toContain('--aws-profile');
    expect(String(r.stdout) + String(r.stderr)).not.toContain(secret);
    // a named profile that the shared files do not have is named too
    const p = await opsctl(['kv', 'backups', 'list', '--from', 's3://backups/etcd/prod', '--aws-profile', 'nightly'], {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    });
    expect(p.exitCode).toBe(4);
    expect(String(p.stderr)).toContain('the profile "nightly" (--aws-profile)');
    // the shared files named where they are (the test moves them with AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE)
    expect(String(p.stderr)).toContain(`of ${s3.env.AWS_SHARED_CREDENTIALS_FILE} and ${s3.env.AWS_CONFIG_FILE}`);
  }, 60_000);

  it('credentials and endpoint as the AWS CLI finds them: a profile of the shared files (--aws-profile or AWS_PROFILE) with its endpoint_url; --endpoint-url beats it', async () => {
    const aws = join(dir, 'aws');
    mkdirSync(aws, { recursive: true });
    const credentials = join(aws, 'credentials');
    const config = join(aws, 'config');
    const keys = `aws_access_key_id = ${ROOT.accessKeyId}\naws_secret_access_key = ${ROOT.secretAccessKey}\n`;
    writeFileSync(credentials, `[nightly]\n${keys}\n[ci]\n${keys}`, { mode: 0o600 });
    // nightly names the endpoint itself; ci through a services section, as the AWS CLI's configured endpoints allow
    writeFileSync(
      config,
      `[profile nightly]\nregion = us-east-1\nendpoint_url = ${s3.url}\n\n[profile ci]\nservices = local\n\n[services local]\ns3 =\n  endpoint_url = ${s3.url}\n`,
    );
    // nothing in the environment but where the shared files are
    const files = { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_ENDPOINT_URL: '', AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_CONFIG_FILE: config };
    const expected = (await list('s3://backups/etcd/prod')).map((x) => x.url);
    const viaFlag = await opsctl(['kv', 'backups', 'list', '--from', 's3://backups/etcd/prod', '--aws-profile', 'nightly', '--json'], files);
    expect(viaFlag.exitCode, String(viaFlag.stderr)).toBe(0);
    expect((JSON.parse(String(viaFlag.stdout)) as Row[]).map((x) => x.url)).toEqual(expected);
    const viaEnv = await opsctl(['kv', 'backups', 'list', '--from', 's3://backups/etcd/prod', '--json'], { ...files, AWS_PROFILE: 'nightly' });
    expect(viaEnv.exitCode, String(viaEnv.stderr)).toBe(0);
    expect((JSON.parse(String(viaEnv.stdout)) as Row[]).map((x) => x.url)).toEqual(expected);
    const viaServices = await opsctl(['kv', 'backups', 'list', '--from', 's3://backups/etcd/prod', '--aws-profile', 'ci', '--json'], files);
    expect(viaServices.exitCode, String(viaServices.stderr)).toBe(0);
    expect((JSON.parse(String(viaServices.stdout)) as Row[]).map((x) => x.url)).toEqual(expected);
    // --endpoint-url is taken over the profile's endpoint_url (here: a port nothing listens on, named in the error)
    const elsewhere = await opsctl(
      ['kv', 'backups', 'list', '--from', 's3://backups/etcd/prod', '--aws-profile', 'nightly', '--endpoint-url', 'http://127.0.0.1:9'],
      files,
    );
    expect(elsewhere.exitCode).not.toBe(0);
    expect(String(elsewhere.stderr)).toContain('127.0.0.1:9');
    expect(String(viaFlag.stdout) + String(viaFlag.stderr) + String(elsewhere.stderr)).not.toContain(ROOT.secretAccessKey);
  }, 60_000);
});

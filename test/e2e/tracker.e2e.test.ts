import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShortcutClient } from '@shortcut/client';
import { execa } from 'execa';
import { BIN, runBin } from '../helpers/bin.js';
import { startMock, type TestState } from '../helpers/mock.js';

/** The built binary (bundled dependencies: yaml, undici's FormData) against a mock on port 0. */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-tracker-'));
  env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.trackerToken };
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('opsctl tracker (built binary)', () => {
  it('applies a YAML file, then finds nothing to do', async () => {
    const f = join(dir, 'labels.yaml');
    writeFileSync(f, 'labels:\n  - name: e2e-bug\n    color: "#d73a4a"\n  - name: e2e-old\n    archived: true\n');
    const first = await runBin(['tracker', 'labels', 'apply', '-f', f], { env });
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(/^create\te2e-bug/m);
    const again = await runBin(['tracker', 'labels', 'apply', '-f', f], { env });
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain('nothing to do');
  });

  it('uploads 5 files in 2 multipart requests', async () => {
    const files = Array.from({ length: 5 }, (_, i) => {
      const p = join(dir, `up${i}.txt`);
      writeFileSync(p, `file ${i}`);
      return p;
    });
    mock.requests.length = 0;
    const r = await runBin(['tracker', 'files', 'upload', ...files, '--json=name,size'], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual(files.map((_, i) => ({ name: `up${i}.txt`, size: 6 })));
    expect(mock.requests.filter((q) => q.path === '/api/v3/files')).toHaveLength(2);
  });

  it('searches every page with --all', async () => {
    for (let i = 0; i < 3; i++) await runBin(['tracker', 'stories', 'create', '--name', `e2e needle ${i}`], { env });
    const r = await runBin(['tracker', 'search', 'stories', '--query', 'e2e needle', '--page-size', '2', '--all', '--json=name'], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(String(r.stdout)).map((s: any) => s.name)).toEqual(['e2e needle 0', 'e2e needle 1', 'e2e needle 2']);
  });
});

describe('@shortcut/client against `opsctl mock serve` (the built binary)', () => {
  it('creates, reads, updates and deletes through the served mock, and uploads a file', async () => {
    const serveDir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-serve-'));
    const serve = execa(process.execPath, [BIN, 'mock', 'serve', '--memory', '--port', '0'], {
      env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: serveDir },
      reject: false,
    });
    let out = '';
    serve.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      // wait for the condition (the URL and token printed), not for a fixed time
      const started = Date.now();
      while (!/tracker token: \S+/.test(out)) {
        if (serve.exitCode !== null || Date.now() - started > 30_000) throw new Error(`mock serve did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const url = /tracker\s+(http:\/\/\S+)/.exec(out)![1];
      const token = /tracker token: (\S+)/.exec(out)![1]!;
      const sc = new ShortcutClient(token, { baseURL: url }); // its default Shortcut-Token header

      const { data: label, status } = await sc.createLabel({ name: 'served', color: '#112233' });
      expect(status).toBe(201);
      expect((await sc.getLabel(label.id)).data).toMatchObject({ name: 'served', color: '#112233', entity_type: 'label' });
      expect((await sc.updateLabel(label.id, { name: 'served-2' })).data.name).toBe('served-2');
      expect((await sc.deleteLabel(label.id)).status).toBe(204);
      const { data: epic } = await sc.createEpic({ name: 'served epic' });
      const { data: comment } = await sc.createEpicComment(epic.id, { text: 'hi' });
      expect((await sc.listEpicComments(epic.id)).data.map((c) => c.id)).toEqual([comment.id]);
      const { data: wfs } = await sc.listWorkflows();
      const { data: story } = await sc.createStory({ name: 'served story', workflow_state_id: wfs[0]!.states.find((st) => st.type === 'started')!.id });
      expect(story).toMatchObject({ started: true, workflow_id: wfs[0]!.id });
      const { data: other } = await sc.createStory({ name: 'served blocker' });
      const { data: task } = await sc.createTask(story.id, { description: 'served task' });
      expect((await sc.updateTask(story.id, task.id, { complete: true })).data.complete).toBe(true);
      const { data: sComment } = await sc.createStoryComment(story.id, { text: 'served comment' });
      expect((await sc.createStoryComment(story.id, { text: 'served reply', parent_id: sComment.id })).data.parent_id).toBe(sComment.id);
      const { data: link } = await sc.createStoryLink({ subject_id: other.id, verb: 'blocks', object_id: story.id });
      expect((await sc.getStory(story.id)).data).toMatchObject({ blocked: true, tasks: [{ id: task.id, complete: true }] });
      expect((await sc.deleteStoryLink(link.id)).status).toBe(204);
      expect((await sc.deleteStory(story.id)).status).toBe(204);
      const { data: files } = await sc.uploadFiles({ file0: new File(['served bytes'], 'served.txt', { type: 'text/plain' }) });
      expect(files[0]).toMatchObject({ name: 'served.txt', size: 12 });
      // the CLI sees what the independent client made
      const r = await runBin(['tracker', 'files', 'get', String(files[0]!.id), '--json=name'], {
        env: { OPSCTL_CONFIG_DIR: serveDir, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: token },
      });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(String(r.stdout))).toEqual({ name: 'served.txt' });
    } finally {
      serve.kill('SIGTERM');
      await serve;
      rmSync(serveDir, { recursive: true, force: true });
    }
  });
});

describe('apply interrupted (SIGINT to the built binary)', () => {
  it('stops taking writes, exits 130 with what was made, and a re-run finishes exactly the rest', async () => {
    await mock.store.write((s: TestState) => void (s.tracker.labels = []));
    const f = join(dir, 'interrupt.yaml');
    writeFileSync(f, `labels:\n${Array.from({ length: 8 }, (_, i) => `  - name: int-${i}\n`).join('')}`);
    mock.requests.length = 0;
    const posts = () => mock.requests.filter((r) => r.method === 'POST' && r.path === '/api/v3/labels').length;
    // a client-side limit of 3 a minute: 1 list + 2 writes, then the pacer holds the rest
    // a user of its own: the earlier tests' requests share the token's pacing window through \`dir\`
    const own = mkdtempSync(join(tmpdir(), 'opsctl-e2e-int-'));
    const child = runBin(['tracker', 'labels', 'apply', '-f', f], { env: { ...env, OPSCTL_CONFIG_DIR: own, OPSCTL_TRACKER_RATE_LIMIT: '3/1m' } });
    const started = Date.now();
    while (posts() < 2) {
      if (child.exitCode !== null || Date.now() - started > 30_000) throw new Error(`apply did not make its first writes: ${String((await child).stderr)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(String(r.stderr)).toMatch(
      /interrupted: 2 of 8 changes applied, 0 failed, \d+ in flight \(may or may not have been made\), \d+ not started; run the same apply again/,
    );
    expect(posts()).toBe(2);

    mock.requests.length = 0;
    const again = await runBin(['tracker', 'labels', 'apply', '-f', f], { env });
    expect(again.exitCode).toBe(0);
    expect(posts()).toBe(6);
    rmSync(own, { recursive: true, force: true });
    const names = await mock.store.read((s: TestState) => s.tracker.labels.map((l: any) => l.name).sort());
    expect(names).toEqual(Array.from({ length: 8 }, (_, i) => `int-${i}`));
  });
});

describe('files upload interrupted (SIGINT to the built binary)', () => {
  it('exits 130 at once, naming what was uploaded and the files to upload again', async () => {
    // a server that answers the first batch and holds the second open, so the interrupt lands mid-batch
    let n = 0;
    let second: () => void = () => undefined;
    const secondArrived = new Promise<void>((r) => (second = r));
    const held: Array<import('node:http').ServerResponse> = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n++;
        if (n === 1) {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify([1, 2, 3, 4].map((id) => ({ id, name: `i${id - 1}.txt`, size: 1 }))));
        } else {
          held.push(res);
          second();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const files = Array.from({ length: 6 }, (_, i) => {
        const p = join(dir, `i${i}.txt`);
        writeFileSync(p, 'x');
        return p;
      });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const child = runBin(['tracker', 'files', 'upload', ...files], { env: { ...env, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: 'tok' } });
      await secondArrived;
      child.kill('SIGINT');
      const r = await child;
      expect(r.exitCode).toBe(130);
      expect(String(r.stderr)).toContain(
        `upload interrupted: 4 of 6 files uploaded; upload the rest again (the batch in flight may or may not have arrived: look with opsctl tracker files list): ${files.slice(4).join(' ')}; uploaded ids: 1, 2, 3, 4`,
      );
      expect(n).toBe(2);
    } finally {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

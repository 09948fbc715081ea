import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { execa } from 'execa';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { haveS3Server, startS3Server, type S3Server } from '../helpers/s3-server.js';

/**
 * README.md runs as pasted, in order, on a fresh machine: every command of its example blocks runs with
 * the built binary, top to bottom, in ONE shell session (/bin/sh, so `story=$(opsctl … --jq .id)` set in
 * one line is there for the next, and quotes, pipes, `<` and `# comments` mean what they mean to a
 * reader), with `opsctl` on PATH being bin/opsctl.cjs, one fresh OPSCTL_CONFIG_DIR and one fresh working
 * directory. Nothing is filled in or prepared behind the reader's back: the walkthroughs create what
 * they use, sign in where they need to, and write the files they read; a ```yaml block whose first line
 * is `# NAME.yaml` is saved under that name where it appears, as a reader saves it.
 *
 * What counts as an example block: a ```sh, ```console or ``` block with a command that starts with
 * `opsctl` or `NAME=$(opsctl`. In a block with `$ ` prompts the `$ ` lines are the commands and the other
 * lines (except `#` comments) are the output the README shows, checked against what the command prints
 * (`…` stands for anything); otherwise every line that is not a comment is a command. Each command must
 * exit 0, or the code its comment names (`# exit 1 …`), and print what its comment quotes after a colon
 * (`# again: "up to date: nothing to send"`).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The README and each guide, each run as a reader runs it: from the top, in a fresh shell, with a fresh
 * config dir and working directory (a guide sets up what it uses; it never leans on another one).
 */
const DOCS = [
  'README.md',
  'docs/usage.md',
  'docs/scripting.md',
  'docs/sign-in.md',
  'docs/kv-upgrade.md',
  'docs/kv-etcdctl.md',
  'docs/mock.md',
  'docs/development.md',
];
const TEXTS = DOCS.map((doc) => ({ doc, text: readFileSync(join(ROOT, doc), 'utf8') }));

/**
 * The only commands not run, each because it needs what no test may use: a host off this machine or a
 * person at a browser. Each says so in its README comment.
 */
const SKIP: Record<string, { reaches: 'a non-loopback host' | 'a person at a browser'; why: string }> = {
  'opsctl tracker labels list              # the real tracker: needs your token and the network': {
    reaches: 'a non-loopback host',
    why: 'the lines above made the profile "work" (https://api.app.shortcut.com) the default',
  },
  'opsctl login --profile google            # real Google: you sign in in the browser': {
    reaches: 'a person at a browser',
    why: "Google's real endpoints (accounts.google.com, oauth2.googleapis.com) and a person at the consent page",
  },
};

/**
 * The fenced shell blocks that hold no opsctl example (so none of their lines is run), by their first
 * line, and why. The test fails when another block joins them, so no example drops out unnoticed.
 */
const NOT_RUN: Record<string, string> = {
  'npm install && npm start     # install, build, and run the tour (opsctl demo) against the embedded mocks':
    "the checkout's own set-up: npm install reaches the npm registry, npm run setup:test installs Debian packages as root, npm test is this suite (test/e2e/package.test.ts runs opsctl demo)",
  'npm run package                                   # out/opsctl and out/opsctl-<version>.tgz':
    "installing opsctl into /usr/local/bin and npm's global prefix (root): test/e2e/package.test.ts builds and runs both artefacts",
  '$ sudo install -m 0644 docs/examples/opsctl-kv-snapshot.service docs/examples/opsctl-kv-snapshot.timer /etc/systemd/system/':
    'installs units into /etc/systemd/system of a host run by systemd (root): test/e2e/kv-snapshot-units.test.ts runs systemd-analyze verify on them',
  "bin/opsctl.cjs         launcher (CommonJS): answers --version itself, and a command's --help from the build's": 'the source layout, not commands',
};

interface Command {
  text: string;
  line: number;
  /** Lines the README shows as this command's output. */
  output: string[];
}
interface Block {
  heading: string;
  line: number;
  commands: Command[];
  /** The README's named YAML files that appear before this block (since the previous one). */
  files: Record<string, string>;
}

/** The trailing `# comment` of a shell line (a `#` outside quotes, after a space), or ''. */
function commentOf(text: string): string {
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(i + 1).trim();
  }
  return '';
}

const isOpsctl = (cmd: string) => /^(\w+=\$\()?opsctl\b/.test(cmd);

function parseReadme(text: string): { blocks: Block[]; files: Record<string, string>; others: string[] } {
  const blocks: Block[] = [];
  const others: string[] = [];
  const files: Record<string, string> = {};
  let pending: Record<string, string> = {};
  const lines = text.split('\n');
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#+ /.test(l)) heading = l.replace(/^#+ /, '');
    const fence = /^```(\w*)\s*$/.exec(l);
    if (!fence) continue;
    const lang = fence[1]!;
    const body: Array<{ text: string; line: number }> = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push({ text: lines[i]!, line: i + 1 });
    if (lang === 'yaml') {
      const name = /^# (\S+\.ya?ml)\s*$/.exec(body[0]?.text ?? '')?.[1];
      if (name) files[name] = pending[name] = body.map((b) => b.text).join('\n') + '\n';
      continue;
    }
    if (!['', 'sh', 'console'].includes(lang)) continue;
    const prompted = body.some((b) => b.text.startsWith('$ '));
    const commands: Command[] = [];
    for (const { text: t, line } of body) {
      if (!t.trim() || /^\s*#/.test(t)) continue;
      if (prompted && !t.startsWith('$ ')) {
        commands.at(-1)?.output.push(t.trim());
        continue;
      }
      commands.push({ text: t.replace(/^\$ /, '').trim(), line, output: [] });
    }
    if (!commands.some((c) => isOpsctl(c.text))) {
      if (body.length) others.push(body[0]!.text);
      continue;
    }
    blocks.push({ heading, line: body[0]!.line - 1, commands, files: pending });
    pending = {};
  }
  return { blocks, files, others };
}

/** The exit code a command's comment documents (`# exit 2: …`), else 0. */
const expectedExit = (text: string) => Number(/\bexit (\d+)\b/.exec(commentOf(text))?.[1] ?? 0);

/** What a command's comment says it prints: each `"…"` right after a `: `. */
const claimsOf = (text: string) => [...commentOf(text).matchAll(/: "([^"]+)"/g)].map((m) => m[1]!);

/** A line the README shows as output, as a pattern over one line of what the command printed. */
const outputPattern = (shown: string) =>
  new RegExp(
    shown
      .split('…')
      .map((part) => part.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  );

/**
 * One /bin/sh for the whole README, fed a command at a time: its output goes to files, and the shell
 * then prints a marker with the exit code on its own stdout, which is all this side reads.
 */
class Session {
  private readonly sh: ChildProcessWithoutNullStreams;
  private readonly outDir = mkdtempSync(join(tmpdir(), 'opsctl-readme-out-'));
  private buffer = '';
  private shellErr = '';
  private exited = false;
  private count = 0;
  private notify: () => void = () => {};

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.sh = spawn('/bin/sh', [], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.sh.stdout.on('data', (d: Buffer) => {
      this.buffer += d.toString();
      this.notify();
    });
    this.sh.stderr.on('data', (d: Buffer) => (this.shellErr += d.toString()));
    this.sh.on('exit', () => {
      this.exited = true;
      this.notify();
    });
  }

  async run(cmd: string, timeoutMs = 150_000): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const n = ++this.count;
    const out = join(this.outDir, `${n}.out`);
    const err = join(this.outDir, `${n}.err`);
    const marker = `__readme_exit_${n}__`;
    const done = new RegExp(`${marker}(\\d+)\\n`);
    this.sh.stdin.write(`{ ${cmd}\n} >'${out}' 2>'${err}' </dev/null\necho "${marker}$?"\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = done.exec(this.buffer);
      if (m) return { exitCode: Number(m[1]), stdout: readFileSync(out, 'utf8'), stderr: readFileSync(err, 'utf8') };
      if (this.exited) throw new Error(`the shell ended before finishing: ${cmd}\n${this.shellErr}`);
      const left = deadline - Date.now();
      if (left <= 0) {
        this.sh.kill('SIGKILL');
        throw new Error(`no answer within ${timeoutMs} ms: ${cmd}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.notify = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async close(): Promise<void> {
    if (!this.exited) {
      const ended = new Promise<void>((resolve) => this.sh.once('exit', () => resolve()));
      this.sh.stdin.end('exit 0\n');
      const timer = setTimeout(() => this.sh.kill('SIGKILL'), 10_000);
      await ended;
      clearTimeout(timer);
    }
    rmSync(this.outDir, { recursive: true, force: true });
  }
}

const parsed = TEXTS.map(({ doc, text }) => ({ doc, ...parseReadme(text) }));
const files = Object.assign({}, ...parsed.map((p) => p.files)) as Record<string, string>;
const others = parsed.flatMap((p) => p.others);
const shim = mkdtempSync(join(tmpdir(), 'opsctl-readme-bin-'));
writeFileSync(join(shim, 'opsctl'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
chmodSync(join(shim, 'opsctl'), 0o755);
const temps: string[] = [shim];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

it('finds the examples of the README and the guides (the parser still matches them)', () => {
  const all = parsed.flatMap((p) => p.blocks.flatMap((b) => b.commands.map((c) => c.text)));
  expect(all.length).toBeGreaterThan(50);
  expect(Object.keys(files).sort()).toEqual(['drift.yaml', 'labels.yaml', 'prod.yaml', 'sensitivity.yaml']);
  expect(others.sort()).toEqual(Object.keys(NOT_RUN).sort());
  for (const [key, skip] of Object.entries(SKIP)) {
    // Every skip still names a command of the README, and the README says there what it needs.
    expect(all).toContain(key);
    expect(commentOf(key), `the README comment of: ${key}`).not.toBe('');
    expect(skip.why).not.toBe('');
  }
});

for (const { doc, blocks } of parsed.filter((p) => p.blocks.length > 0))
  describe(`${doc}, pasted in order into one shell on a fresh machine`, () => {
    const cwd = mkdtempSync(join(tmpdir(), 'opsctl-readme-'));
    const config = mkdtempSync(join(tmpdir(), 'opsctl-readme-config-'));
    temps.push(cwd, config);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${shim}:${process.env.PATH}`,
      OPSCTL_CONFIG_DIR: join(config, '.opsctl'),
      NO_COLOR: '1',
      CI: '1',
    };
    for (const v of Object.keys(env)) if (v.startsWith('OPSCTL_') && v !== 'OPSCTL_CONFIG_DIR' && !v.startsWith('OPSCTL_ETCD_')) delete env[v];
    const session = new Session(cwd, env);
    let sandboxUp = false;
    // The guide's off-host snapshots reach a real S3-compatible server (versitygw) on a loopback port, named to
    // the shell as the AWS CLI's variables; without the server those lines skip loudly (CI requires it).
    let s3: S3Server | undefined;
    const usesS3 = blocks.some((b) => b.commands.some((c) => c.text.includes('s3://')));
    beforeAll(async () => {
      if (!usesS3 || !haveS3Server()) return;
      s3 = await startS3Server();
      await s3.bucket('etcd-backups');
      const exports = Object.entries(s3.env).map(([k, v]) => `${k}='${v}'`);
      const r = await session.run(`export ${exports.join(' ')}`);
      expect(r.exitCode).toBe(0);
    }, 60_000);
    afterAll(async () => {
      await s3?.stop();
      // A failed run may leave the kv sandbox of the README's kv block up: stop exactly it.
      if (sandboxUp) await execa(process.execPath, [BIN, 'kv', 'sandbox', 'down'], { cwd, env, reject: false, extendEnv: false });
      await session.close();
    });

    for (const block of blocks) {
      it(`${doc} line ${block.line} (${block.heading}): ${block.commands.map((c) => c.text.replace(/\s+#.*$/, '')).join(' ; ')}`, async () => {
        for (const [name, content] of Object.entries(block.files)) writeFileSync(join(cwd, name), content);
        for (const { text, line, output } of block.commands) {
          if (SKIP[text]) continue;
          if (text.includes('s3://') && !s3) continue;
          if (/\bkv sandbox up\b/.test(text)) sandboxUp = true;
          const r = await session.run(text);
          if (/\bkv sandbox down\b/.test(text) && r.exitCode === 0) sandboxUp = false;
          expect(r.exitCode, `${doc} line ${line}: ${text}\n${r.stderr}`).toBe(expectedExit(text));
          expect(r.stderr, `${doc} line ${line}: ${text}`).not.toMatch(/unexpected error/i);
          const printed = `${r.stdout}\n${r.stderr}`.split('\n').map((l) => l.trim());
          for (const claim of claimsOf(text)) {
            expect(
              printed.some((l) => l.includes(claim)),
              `${doc} line ${line}: ${text}\nsays it prints "${claim}", but it printed:\n${r.stdout}\n${r.stderr}`,
            ).toBe(true);
          }
          for (const shown of output.filter((o) => o !== '…')) {
            const pattern = outputPattern(shown);
            expect(
              printed.some((l) => pattern.test(l)),
              `${doc} line ${line}: ${text}\nshows "${shown}", but it printed:\n${r.stdout}\n${r.stderr}`,
            ).toBe(true);
          }
        }
      }, 300_000);
    }
  });

it('the README stays short (at most 250 lines) and every document it and the guides link to exists', () => {
  expect(TEXTS[0]!.text.split('\n').length).toBeLessThanOrEqual(250);
  for (const { doc, text } of TEXTS) {
    for (const [, target] of text.matchAll(/\]\(((?:docs\/)?[\w.-]+\.md)(?:#[\w-]*)?\)/g)) {
      const path = doc === 'README.md' ? join(ROOT, target!) : join(ROOT, 'docs', target!.replace(/^docs\//, ''));
      expect(existsSync(path), `${doc} links to ${target}`).toBe(true);
    }
  }
});

it("the README's prod.yaml loads with the built binary (its 10.0.0.x endpoints moved to a closed loopback port: no traffic leaves the machine)", async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'opsctl-readme-prod-'));
  temps.push(cwd);
  writeFileSync(join(cwd, 'prod.yaml'), files['prod.yaml']!.replace(/http:\/\/10\.0\.0\.\d+:2379/g, 'http://127.0.0.1:9'));
  const r = await execa(process.execPath, [BIN, 'kv', 'health', '--cluster', 'prod.yaml', '--json'], {
    cwd,
    reject: false,
    env: { OPSCTL_CONFIG_DIR: join(cwd, '.opsctl'), NO_COLOR: '1' },
  });
  expect(r.stderr).not.toContain('is not a function');
  expect(r.stderr).not.toContain('neither JSON nor YAML');
  expect(r.stderr).not.toMatch(/unexpected error/i);
  // Three members, all unreachable: a failure (exit 1) that names them, not a usage error about the file.
  expect(r.exitCode).toBe(1);
  expect(`${r.stdout}${r.stderr}`).toContain('infra3');
});

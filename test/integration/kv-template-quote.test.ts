import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileTemplate, displayArgv, renderArgv, shellQuote } from '../../src/kv/templates/argv.js';
import { templateProblem } from '../../src/kv/templates/argv.js';
import { seeded } from '../helpers/fuzz.js';

/** The shells a quoted value must survive (the remote user's shell is one of them). */
const SHELLS = ['/bin/sh', '/usr/bin/bash', '/usr/bin/dash'];
const dir = mkdtempSync(join(tmpdir(), 'opsctl-quote-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rng = seeded(27);
/** A random NUL-free string: bytes 1–255 as characters, some wider characters, shell syntax. */
function randomValue(): string {
  const pieces = ["'", '"', '\\', '$(', '`', ';', '|', '&&', '\n', '*', '?', '[a]', '{a,b}', '~', '=', '#', '!', '-o', ' ', '\t', 'é', '€', '😀'];
  let s = '';
  const n = 1 + rng.int(12);
  for (let i = 0; i < n; i++) s += rng.next() < 0.5 ? String.fromCharCode(1 + rng.int(255)) : rng.pick(pieces);
  return s;
}

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
}

describe('shellQuote: one quoting function, property-tested against sh, bash and dash', () => {
  it('every character 1–255 alone: `sh -c "printf %s <quoted>"` prints it back exactly', async () => {
    const jobs = SHELLS.flatMap((sh) => Array.from({ length: 255 }, (_, i) => ({ sh, v: String.fromCharCode(i + 1) })));
    const bad: string[] = [];
    await pool(jobs, 8, async ({ sh, v }) => {
      const r = await execa(sh, ['-c', `printf %s ${shellQuote(v)}`], { reject: false, stripFinalNewline: false, encoding: 'buffer' });
      if (r.exitCode !== 0 || !Buffer.from(r.stdout).equals(Buffer.from(v, 'utf8'))) bad.push(`${sh} ${JSON.stringify(v)}`);
    });
    expect(bad).toEqual([]);
  }, 120_000);

  it('every raw byte 1–255 (a script file of bytes, not UTF-8) and 300 random strings come back byte for byte', async () => {
    // Bytes: the value as latin1 text, quoted, written as latin1: the quoting never looks past "'".
    const bytes = Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1));
    const randoms = Array.from({ length: 300 }, randomValue);
    for (const sh of SHELLS) {
      const file = join(dir, 'bytes.sh');
      writeFileSync(file, Buffer.from(`printf '%s\\0' ${bytes.map(shellQuote).join(' ')}\n`, 'latin1'));
      const r = await execa(sh, [file], { encoding: 'buffer' });
      const got = Buffer.from(r.stdout).toString('latin1').split('\0').slice(0, -1);
      expect(got, sh).toEqual(bytes);
      const r2 = await execa(sh, ['-c', `printf '%s\\0' ${randoms.map(shellQuote).join(' ')}`], { encoding: 'buffer' });
      expect(Buffer.from(r2.stdout).toString('utf8').split('\0').slice(0, -1), sh).toEqual(randoms);
    }
  }, 120_000);

  it('plain values stay readable; anything else is single-quoted, and never an assignment, =cmd or brace list', () => {
    expect(shellQuote('/var/lib/etcd.bak-r1')).toBe('/var/lib/etcd.bak-r1');
    expect(shellQuote('--reference=/x')).toBe('--reference=/x');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('PATH=/tmp')).toBe("'PATH=/tmp'");
    expect(shellQuote('=ls')).toBe("'=ls'");
    expect(shellQuote('a,b')).toBe("'a,b'");
    expect(displayArgv(['ssh', '--', 'h', "echo 'x y'"])).toBe(`ssh -- h 'echo '\\''x y'\\'''`);
  });
});

const render = (t: string, vars: Record<string, string>) => renderArgv(compileTemplate(t), (k) => vars[k]!);

describe('the template grammar: argv once, at parse time; each placeholder one argument', () => {
  it('blanks split, quotes group, backslash escapes; no expansion of any kind', () => {
    expect(render(`a 'b c' "d \\" e" f\\ g '' $HOME * ~ {x}`, { x: 'v w' })).toEqual(['a', 'b c', 'd " e', 'f g', '', '$HOME', '*', '~', 'v w']);
    expect(render('p --data-dir=/srv/{name}/data', { name: 'a b;c' })).toEqual(['p', '--data-dir=/srv/a b;c/data']);
    expect(render(`awk '{print $1}' {x}`, { x: '*' })).toEqual(['awk', '{print $1}', '*']);
  });

  it('a bad template is refused when read, naming the problem', () => {
    expect(templateProblem('ssh {host} "x')).toMatch(/unbalanced quote/);
    expect(templateProblem('x \\')).toMatch(/backslash at the end/);
    expect(templateProblem('x {nope}')).toMatch(/unknown placeholder \{nope\}/);
    expect(templateProblem('x\u0007y')).toMatch(/control character/);
  });

  it('ssh: -- before the host; the remote words each one argument there (quoted for the remote shell), bare words as written', () => {
    const v = { host: 'h1', name: "e1$(touch /tmp/x) 'q'", run: 'r1' };
    expect(render('ssh -l admin -o ConnectTimeout=3 {host} sudo cp -a /d /d.bak-{run} && echo {name}', v)).toEqual([
      'ssh',
      '-l',
      'admin',
      '-o',
      'ConnectTimeout=3',
      '--',
      'h1',
      'sudo',
      'cp',
      '-a',
      '/d',
      '/d.bak-r1',
      '&&',
      'echo',
      `'e1$(touch /tmp/x) '\\''q'\\'''`,
    ]);
    // A host that looks like an option stays the destination (and is refused earlier by its rule).
    expect(render('ssh {host} true', { host: '-oProxyCommand=touch /tmp/x' })).toEqual(['ssh', '--', '-oProxyCommand=touch /tmp/x', 'true']);
    // ssh as an argument (a unit), not the program: the words stay as they are.
    expect(render('ssh {host} systemctl restart ssh && echo {name}', { host: 'h', name: 'a b' })).toEqual([
      'ssh',
      '--',
      'h',
      'systemctl',
      'restart',
      'ssh',
      '&&',
      'echo',
      "'a b'",
    ]);
    // After a wrapper, with a placeholder host: the program.
    expect(render('ip netns exec hub ssh -l root {host} true', { host: 'h' })).toEqual(['ip', 'netns', 'exec', 'hub', 'ssh', '-l', 'root', '--', 'h', 'true']);
    // Already there: not twice.
    expect(render('ssh -- {host} true', { host: 'h' })).toEqual(['ssh', '--', 'h', 'true']);
    // A quoted word is one argument on the host (it used to be split again by the remote shell).
    expect(render('ssh {host} sudo sh -c "systemctl stop etcd && echo {name}"', { host: 'h', name: 'a;b' })).toEqual([
      'ssh',
      '--',
      'h',
      'sudo',
      'sh',
      '-c',
      `'systemctl stop etcd && echo '\\''a;b'\\'''`,
    ]);
  });

  it('one quoted word after the host is the remote script (as the README kubeadm example); its placeholders are quoted', () => {
    expect(render(`ssh {host} "sudo crictl ps --name '^etcd$' -q | grep -q ."`, { host: 'h' })).toEqual([
      'ssh',
      '--',
      'h',
      "sudo crictl ps --name '^etcd$' -q | grep -q .",
    ]);
    expect(render('ssh {host} "cat /etc/etcd/{name}.yml | head"', { host: 'h', name: '$(id)' })).toEqual([
      'ssh',
      '--',
      'h',
      "cat /etc/etcd/'$(id)'.yml | head",
    ]);
  });

  it("sh -c (here or over ssh): the script's placeholders quoted for that shell, again for ssh", () => {
    expect(render('sh -c "echo {x} >/dev/null"', { x: '`id`' })).toEqual(['sh', '-c', "echo '`id`' >/dev/null"]);
    expect(render('ssh {host} bash -ec "echo {x}"', { host: 'h', x: "'" })).toEqual(['ssh', '--', 'h', 'bash', '-ec', shellQuote(`echo ${shellQuote("'")}`)]);
  });

  it('a placeholder a shell would not read as one word is refused when the template is read', () => {
    for (const t of [
      `sh -c "echo '{name}'"`,
      'sh -c \'echo "{name}"\'',
      'sh -c "echo \\\\{name}"',
      'sh -c "echo ${name}"',
      'sh -c "# {name}"',
      'sh -c "cat <<EOF\n{name}\nEOF"',
      'sh -c "echo `echo {name}`"',
      'sh -c "echo $(({name}))"',
      'sh -c "echo ${X:-{name}}"',
      `sh -c "echo \\"$(echo ' \\" ')'{name}"`,
      `ssh {host} "echo '{name}'"`,
      'ssh {host} echo # {name}',
    ])
      expect(templateProblem(t), t).toMatch(/stands .* in a shell script/);
    // Outside quotes, in $( … ), after a comment's line: fine.
    for (const t of ['sh -c "echo $(basename {name}) # ok"', 'sh -c "# c\necho {name}"', 'sh -c "x=\'a\'{name}"'])
      expect(templateProblem(t), t).toBeUndefined();
  });
});

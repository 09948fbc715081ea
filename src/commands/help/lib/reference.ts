import type { Command } from 'commander';
import { examplesOf } from '../../action.js';

/** One command of the tree, as the reference, `opsctl help reference` and the man pages show it. */
export interface CommandDoc {
  /** The full command line words, e.g. "opsctl kv upgrade". */
  command: string;
  summary: string;
  usage: string;
  arguments: Array<{ name: string; description: string; required: boolean; choices?: string[] }>;
  options: Array<{ flags: string; description: string; choices?: string[]; default?: string }>;
  examples: string[];
  /** Names of the subcommands, for a command that only groups others. */
  subcommands: string[];
}

const hidden = (c: Command) => Boolean((c as unknown as { _hidden?: boolean })._hidden);

/** Every visible command of the tree, depth first, the root first. */
export function referenceOf(root: Command): CommandDoc[] {
  const docs: CommandDoc[] = [];
  const walk = (cmd: Command, words: string[]) => {
    docs.push({
      command: words.join(' '),
      summary: cmd.description(),
      usage: `${words.join(' ')} ${cmd.usage()}`.trim(),
      arguments: cmd.registeredArguments.map((a) => ({
        name: a.name(),
        description: a.description,
        required: a.required,
        ...(a.argChoices ? { choices: [...a.argChoices] } : {}),
      })),
      options: cmd.options
        .filter((o) => !o.hidden)
        .map((o) => ({
          flags: o.flags,
          description: o.description,
          ...(o.argChoices ? { choices: [...o.argChoices] } : {}),
          ...(o.defaultValue !== undefined && typeof o.defaultValue !== 'boolean' ? { default: String(o.defaultValue as string | number) } : {}),
        })),
      examples: [...examplesOf(cmd)],
      subcommands: cmd.commands.filter((c) => !hidden(c)).map((c) => c.name()),
    });
    for (const sub of cmd.commands) if (!hidden(sub)) walk(sub, [...words, sub.name()]);
  };
  walk(root, [root.name()]);
  return docs;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The reference as Markdown (docs/reference.md; a test fails when that file is stale). */
export function referenceMarkdown(docs: readonly CommandDoc[]): string {
  const out = [
    '# Command reference',
    '',
    'Generated from the command tree by `npm run docs` (`opsctl help reference`); a test fails when it is stale.',
    'Global flags (`--json[=fields]`, `--jq`, `--no-input`, `--yes`, `--debug`, `--profile`) work on every command.',
    '',
  ];
  for (const d of docs) {
    out.push(`## ${d.command}`, '');
    if (d.summary) out.push(d.summary, '');
    out.push('```', d.usage, '```', '');
    if (d.arguments.length) {
      out.push('| argument | description |', '| --- | --- |');
      for (const a of d.arguments)
        out.push(`| \`${a.name}\`${a.required ? '' : ' (optional)'} | ${cell(a.description)}${a.choices ? ` (one of: ${a.choices.join(', ')})` : ''} |`);
      out.push('');
    }
    if (d.options.length) {
      out.push('| flag | description |', '| --- | --- |');
      for (const o of d.options)
        out.push(
          `| \`${cell(o.flags)}\` | ${cell(o.description)}${o.choices ? ` (one of: ${o.choices.join(', ')})` : ''}${o.default ? ` (default: ${cell(o.default)})` : ''} |`,
        );
      out.push('');
    }
    if (d.subcommands.length) out.push(`Commands: ${d.subcommands.map((s) => `\`${s}\``).join(', ')}.`, '');
    if (d.examples.length) out.push('Examples:', '', '```sh', ...d.examples.map((e) => `$ ${e}`), '```', '');
  }
  return out.join('\n');
}

/** roff-escaped text: backslashes, and a leading dot or quote that roff would read as a request. */
const roff = (s: string) =>
  s
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');

/** One man page per command (`man opsctl-kv-upgrade`), in the man(7) macros. */
export function manPages(docs: readonly CommandDoc[], version: string): Array<{ name: string; text: string }> {
  return docs.map((d) => {
    const name = d.command.replace(/ /g, '-');
    const lines = [
      `.TH ${name.toUpperCase()} 1 "" "opsctl ${version}" "opsctl manual"`,
      '.SH NAME',
      `${roff(name)} \\- ${roff(d.summary || d.command)}`,
      '.SH SYNOPSIS',
      `.B ${roff(d.usage)}`,
    ];
    if (d.arguments.length) {
      lines.push('.SH ARGUMENTS');
      for (const a of d.arguments) lines.push('.TP', `.B ${roff(a.name)}`, roff(a.description + (a.choices ? ` (one of: ${a.choices.join(', ')})` : '')));
    }
    if (d.options.length) {
      lines.push('.SH OPTIONS');
      for (const o of d.options)
        lines.push(
          '.TP',
          `.B ${roff(o.flags)}`,
          roff(o.description + (o.choices ? ` (one of: ${o.choices.join(', ')})` : '') + (o.default ? ` (default: ${o.default})` : '')),
        );
    }
    if (d.subcommands.length) {
      lines.push('.SH COMMANDS');
      for (const s of d.subcommands) lines.push('.TP', `.B ${roff(s)}`, `see \\fB${roff(`${name}-${s}`)}\\fR(1)`);
    }
    if (d.examples.length) {
      lines.push('.SH EXAMPLES');
      for (const e of d.examples) lines.push('.PP', '.nf', roff(`$ ${e}`), '.fi');
    }
    lines.push('.SH SEE ALSO', '\\fBopsctl\\fR(1); the guides in docs/ of the opsctl source: sign\\-in, scripting, kv upgrade, the mock services');
    return { name: `${name}.1`, text: `${lines.join('\n')}\n` };
  });
}

import type { Command } from 'commander';
import { suggested } from './suggest.js';

/** What a flag's value, or a positional argument, completes to besides fixed choices. */
export type ValueKind = 'file' | 'dir' | 'profile';

export interface CompletionFlag {
  flag: string;
  takesValue: boolean;
  /** Fixed values; a value may contain spaces ("in progress") and is offered as one word. */
  choices?: string[];
  kind?: ValueKind;
  /** Values the service knows (`states`, `labels`, `epics`), listed by `opsctl __complete SOURCE` when dynamic completion is on. */
  dynamic?: DynamicSource;
  /** On the long name of an option that also has a short one: that short name (`-f`). */
  short?: string;
  description: string;
}

/** The command tree reduced to what completion needs: names, flags and (for choices) values. */
export interface CompletionNode {
  name: string;
  description: string;
  flags: CompletionFlag[];
  /** Values of a positional argument with fixed choices (e.g. `completion <shell>`). */
  values: string[];
  /** A positional argument is a file (`kv snapshot save <file>`, `files upload <files...>`). */
  fileArgs: boolean;
  children: CompletionNode[];
}

/** What `opsctl __complete` can list: names the tracker knows, and the configured profiles. */
export const DYNAMIC_SOURCES = ['states', 'labels', 'epics', 'profiles'] as const;
export type DynamicSource = (typeof DYNAMIC_SOURCES)[number];

/** The tracker flags that take a name the service knows (`<name|id>`), and where the names come from. */
const TRACKER_DYNAMIC: Record<string, DynamicSource> = {
  '--state': 'states',
  '--workflow-state-id': 'states',
  '--epic-id': 'epics',
  '--label-name': 'labels',
};

/** The top-level noun a command belongs to (`tracker` for `tracker stories move`). */
function nounOf(cmd: Command): string {
  let c = cmd;
  while (c.parent?.parent) c = c.parent;
  return c.parent ? c.name() : '';
}

/** The kind of a flag's value, from its name and placeholder: `--profile <name>`, `-f, --file <path|->`, `--etcd-bin <dir>`. */
function valueKind(long: string | undefined, flags: string): ValueKind | undefined {
  if (long === '--profile') return 'profile';
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(flags)?.[1] ?? '';
  if (/^dir$/i.test(placeholder)) return 'dir';
  if (/^(file|path)(\|-)?$/i.test(placeholder)) return 'file';
  return undefined;
}

export function completionTree(cmd: Command, inherited: CompletionFlag[] = []): CompletionNode {
  const own = cmd.options
    .filter((o) => !o.hidden)
    .flatMap((o) => {
      const names = [o.long, o.short].filter((n): n is string => Boolean(n));
      const kind = o.required || o.optional ? valueKind(o.long, o.flags) : undefined;
      const dynamic = (o.required || o.optional) && !o.argChoices && nounOf(cmd) === 'tracker' ? TRACKER_DYNAMIC[o.long ?? ''] : undefined;
      return names.map((flag) => ({
        flag,
        takesValue: o.required || o.optional,
        choices: o.argChoices ? [...o.argChoices] : suggested(o) ? [...(suggested(o) ?? [])] : undefined,
        kind,
        ...(dynamic ? { dynamic } : {}),
        short: flag === o.long && o.short ? o.short : undefined,
        description: o.description ?? '',
      }));
    });
  const flags = [...own, ...inherited];
  const children = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).map((c) => completionTree(c, cmd.parent ? inherited : own));
  const values = cmd.registeredArguments.flatMap((a) => a.argChoices ?? []);
  const fileArgs = cmd.registeredArguments.some((a) => /^files?$/.test(a.name()));
  return { name: cmd.name(), description: cmd.description(), flags: cmd.parent ? flags : own, values, fileArgs, children };
}

interface PathEntry {
  path: string;
  node: CompletionNode;
}

/** Every command with its path below the root ('' for the root itself, 'tracker labels' …). */
function paths(node: CompletionNode, path = ''): PathEntry[] {
  return [{ path, node }, ...node.children.flatMap((c) => paths(c, path ? `${path} ${c.name}` : c.name))];
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Prints the profile names of opsctl's config.json, one a line, for `--profile` completion. Plain
 * node with no opsctl code (cheap: one small file read); the directory follows the same rules as
 * src/config/paths.ts (OPSCTL_CONFIG_DIR, else env-paths' config dir), which a test checks.
 * No single quotes inside: it is embedded single-quoted in every shell.
 */
export const PROFILE_LISTER =
  'const o=require("os"),p=require("path"),e=process.env,h=o.homedir();' +
  'const d=e.OPSCTL_CONFIG_DIR||(process.platform==="darwin"?p.join(h,"Library","Preferences","opsctl")' +
  ':process.platform==="win32"?p.join(e.APPDATA||p.join(h,"AppData","Roaming"),"opsctl","Config")' +
  ':p.join(e.XDG_CONFIG_HOME||p.join(h,".config"),"opsctl"));' +
  'let n=[];try{n=Object.keys(JSON.parse(require("fs").readFileSync(p.join(d,"config.json"),"utf8")).profiles||{})}catch{}' +
  'console.log(["embedded",...n.filter(x=>x!=="embedded")].join("\\n"))';

/** The flags of a command whose value opsctl cannot list (free text, numbers): nothing is offered after them, never a flag name. */
function freeValueFlags(node: CompletionNode): string {
  return node.flags
    .filter((f) => f.takesValue && !f.choices && !f.kind && !f.dynamic)
    .map((f) => f.flag)
    .join(' ');
}

/** The flag/value cases of one command: `path|flag` → what to offer (choices or suggestions, files). */
function valueEntries(root: CompletionNode): Array<{ path: string; flag: CompletionFlag }> {
  return paths(root).flatMap(({ path, node }) =>
    node.flags.filter((f) => f.takesValue && (f.choices || f.dynamic || (f.kind && f.kind !== 'profile'))).map((flag) => ({ path: path.trim(), flag })),
  );
}

export function bashScript(root: CompletionNode): string {
  const cases = paths(root)
    .map(({ path, node }) => {
      const words = [...node.children.map((c) => c.name), ...node.values, ...node.flags.map((f) => f.flag)].join(' ');
      const free = freeValueFlags(node);
      return `    ${q(path.trim())}) words=${q(words)}${free ? `; free=${q(free)}` : ''}${node.fileArgs ? '; files=1' : ''} ;;`;
    })
    .join('\n');
  const valueCases = valueEntries(root)
    .map(({ path, flag }) => {
      const action = flag.choices
        ? `_opsctl_choose ${flag.choices.map(q).join(' ')}`
        : flag.dynamic
          ? `_opsctl_dynamic ${flag.dynamic}`
          : flag.kind === 'dir'
            ? '_opsctl_files -d'
            : '_opsctl_files -f';
      return `    ${q(`${path}|${flag.flag}`)}) ${action}; return ;;`;
    })
    .join('\n');
  return `# bash completion for opsctl (generated by: opsctl completion bash; do not edit)
_opsctl() {
  local cur prev path="" i w words free="" files=""
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    _opsctl_has "\${path:+$path }$w" && path="\${path:+$path }$w"
  done
  case "$path|$prev" in
${valueCases || '    __none__) ;;'}
    *'|--profile') local names; mapfile -t names < <(_opsctl_profiles); _opsctl_choose "\${names[@]}"; return ;;
  esac
  _opsctl_words "$path"
  # a value opsctl cannot list: offer nothing rather than flag names
  if [[ " $free " == *" $prev "* ]]; then COMPREPLY=(); return; fi
  if [[ -n "$files" && "$cur" != -* ]]; then _opsctl_files -f; return; fi
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
# Offers each choice that starts with what was typed as one candidate, so "in progress" never
# splits: quoted ('in progress') unless the user opened a quote, which the shell then closes.
_opsctl_choose() {
  local c typed="$cur" quote=""
  case "$typed" in \\'*|\\"*) quote="\${typed:0:1}"; typed="\${typed:1}" ;; esac
  typed="\${typed//\\\\ / }"
  COMPREPLY=()
  for c in "$@"; do
    [[ "$c" == "$typed"* ]] || continue
    if [[ -n "$quote" || "$c" != *[[:space:]]* ]]; then COMPREPLY+=("$c"); else COMPREPLY+=("'$c'"); fi
  done
}
# File (-f) or directory (-d) names, one candidate each even with spaces in them.
_opsctl_files() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen "$1" -- "$cur")
}
_opsctl_profiles() { command node -e ${q(PROFILE_LISTER)} 2>/dev/null || echo embedded; }
# Names the service knows, only when dynamic completion is on (opsctl completion bash --dynamic, or
# OPSCTL_COMPLETE_DYNAMIC=1): opsctl __complete asks the service with a short timeout and prints nothing on error.
_opsctl_dynamic() {
  COMPREPLY=()
  [[ -n "$_opsctl_dynamic_on" || ( -n "$OPSCTL_COMPLETE_DYNAMIC" && "$OPSCTL_COMPLETE_DYNAMIC" != 0 ) ]] || return 0
  local names; mapfile -t names < <(command opsctl __complete "$1" 2>/dev/null)
  _opsctl_choose "\${names[@]}"
}
_opsctl_has() { local words="" free="" files=""; _opsctl_words "$1"; [[ -n "$words" ]]; }
_opsctl_words() {
  case "$1" in
${cases}
    *) words="" ;;
  esac
}
${DYNAMIC_MARK.bash}
complete -F _opsctl opsctl
`;
}

export function zshScript(root: CompletionNode): string {
  const cases = paths(root)
    .map(({ path, node }) => {
      const items = [
        ...node.children.map((c) => `${c.name}:${c.description.replace(/:/g, '\\:')}`),
        ...node.values.map((v) => `${v}:${v}`),
        ...node.flags.map((f) => `${f.flag}:${f.description.replace(/:/g, '\\:')}`),
      ];
      const free = freeValueFlags(node);
      return `    ${q(path.trim())}) items=(${items.map(q).join(' ')})${free ? `; free=${q(free)}` : ''}${node.fileArgs ? '; files=1' : ''} ;;`;
    })
    .join('\n');
  const valueCases = valueEntries(root)
    .map(({ path, flag }) => {
      const action = flag.choices
        ? `compadd -- ${flag.choices.map(q).join(' ')}`
        : flag.dynamic
          ? `_opsctl_dynamic ${flag.dynamic}`
          : flag.kind === 'dir'
            ? '_files -/'
            : '_files';
      return `    ${q(`${path}|${flag.flag}`)}) ${action}; return ;;`;
    })
    .join('\n');
  // (`path` is zsh's array tied to PATH: the command path is `cmdpath` here.)
  return `#compdef opsctl
# zsh completion for opsctl (generated by: opsctl completion zsh; do not edit)
_opsctl() {
  local -a items
  local cmdpath="" w free="" files=""
  for w in \${words[2,CURRENT-1]}; do
    [[ "$w" == -* ]] && continue
    _opsctl_items "\${cmdpath:+$cmdpath }$w"
    (( \${#items} )) && cmdpath="\${cmdpath:+$cmdpath }$w"
  done
  case "$cmdpath|\${words[CURRENT-1]}" in
${valueCases || '    __none__) ;;'}
    *'|--profile') compadd -- \${(f)"$(_opsctl_profiles)"}; return ;;
  esac
  _opsctl_items "$cmdpath"
  # a value opsctl cannot list: say so rather than offer flag names
  if [[ " $free " == *" \${words[CURRENT-1]} "* ]]; then _message -r "a value for \${words[CURRENT-1]}"; return; fi
  if [[ -n "$files" && "\${words[CURRENT]}" != -* ]]; then _files; return; fi
  _describe 'opsctl' items
}
_opsctl_profiles() { command node -e ${q(PROFILE_LISTER)} 2>/dev/null || print embedded; }
_opsctl_dynamic() {
  if [[ -z "$_opsctl_dynamic_on" && ( -z "$OPSCTL_COMPLETE_DYNAMIC" || "$OPSCTL_COMPLETE_DYNAMIC" == 0 ) ]]; then _message -r "a value for \${words[CURRENT-1]}"; return; fi
  local -a names
  names=(\${(f)"$(command opsctl __complete $1 2>/dev/null)"})
  compadd -- \${names[@]}
}
_opsctl_items() {
  items=()
  free=""
  files=""
  case "$1" in
${cases}
  esac
}
${DYNAMIC_MARK.zsh}
compdef _opsctl opsctl
`;
}

/** A fish token: quoted when it has anything but plain characters, so "in progress" stays one value. */
const fishWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/["\\$]/g, '\\$&')}"`);

export function fishScript(root: CompletionNode): string {
  const lines: string[] = [
    '# fish completion for opsctl (generated by: opsctl completion fish; do not edit)',
    'function __opsctl_profiles',
    // fish single quotes keep everything but \\ and \' literally; the lister has neither
    `    node -e '${PROFILE_LISTER}' 2>/dev/null; or echo embedded`,
    'end',
    'function __opsctl_dynamic',
    '    if set -q __opsctl_dynamic_on; or begin; set -q OPSCTL_COMPLETE_DYNAMIC; and test -n "$OPSCTL_COMPLETE_DYNAMIC"; and test "$OPSCTL_COMPLETE_DYNAMIC" != 0; end',
    '        command opsctl __complete $argv[1] 2>/dev/null',
    '    end',
    'end',
    DYNAMIC_MARK.fish,
    'complete -c opsctl -f',
  ];
  for (const { path, node } of paths(root)) {
    const words = path.trim() ? path.trim().split(' ') : [];
    const cond = words.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${words[words.length - 1]}`;
    for (const value of node.values) lines.push(`complete -c opsctl -n ${q(cond)} -a ${q(fishWord(value))}`);
    if (node.fileArgs) lines.push(`complete -c opsctl -n ${q(cond)} -F`);
    for (const child of node.children) {
      lines.push(`complete -c opsctl -n ${q(cond)} -a ${q(child.name)} -d ${q(child.description.slice(0, 80))}`);
    }
    for (const f of node.flags) {
      if (!f.flag.startsWith('--')) continue;
      const s = f.short ? ` -s ${f.short.slice(1)}` : '';
      const arg = f.choices
        ? ` -r -a ${q(f.choices.map(fishWord).join(' '))}`
        : f.dynamic
          ? ` -x -a '(__opsctl_dynamic ${f.dynamic})'`
          : f.kind === 'profile'
            ? ` -r -a '(__opsctl_profiles)'`
            : f.kind === 'file' || f.kind === 'dir'
              ? ' -r -F'
              : f.takesValue
                ? ' -x'
                : '';
      lines.push(`complete -c opsctl -n ${q(cond)} -l ${q(f.flag.slice(2))}${s}${arg} -d ${q(f.description.slice(0, 80))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The line each script carries that `--dynamic` turns on (committed scripts: off; the environment variable still turns it on). */
const DYNAMIC_MARK = {
  bash: '_opsctl_dynamic_on=${_opsctl_dynamic_on:-}',
  zsh: '_opsctl_dynamic_on=${_opsctl_dynamic_on:-}',
  fish: '# dynamic completion: off unless OPSCTL_COMPLETE_DYNAMIC is set',
} as const;
const DYNAMIC_ON = { bash: '_opsctl_dynamic_on=1', zsh: '_opsctl_dynamic_on=1', fish: 'set -g __opsctl_dynamic_on 1' } as const;

/** The completion script of `shell`; `dynamic`: values the service knows are completed without OPSCTL_COMPLETE_DYNAMIC. */
export function completionScript(shell: Shell, program: Command, { dynamic = false }: { dynamic?: boolean } = {}): string {
  const tree = completionTree(program);
  const script = shell === 'bash' ? bashScript(tree) : shell === 'zsh' ? zshScript(tree) : fishScript(tree);
  return dynamic ? script.replace(DYNAMIC_MARK[shell], DYNAMIC_ON[shell]) : script;
}

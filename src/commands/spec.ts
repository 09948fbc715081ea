import { Argument, Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { suggest } from '../completion/suggest.js';
import { examples, lazyAction, type VerbModule } from './action.js';
import { expandHomeFlags } from './lib/home-path.js';

/**
 * A verb as data: its name, positional arguments, flags, help and examples. The spec is all a noun's
 * `--help` (and the completions and reference built from the tree) needs, so it lives in a light file
 * (`<verb>.spec.ts`) that imports nothing heavier than this module; the verb's `run` (`<verb>.ts`) is
 * loaded by `load` only when the command runs. The verb's options type is inferred from the spec
 * (`OptionsOf<typeof spec>`), so there is no hand-written options interface and no mapper: the adapter
 * below turns commander's values into those options, positional names becoming option fields.
 */

/** A boolean flag `--name` (false when absent); with `negate`, also `--no-name` (then undefined when neither is given). */
export interface BooleanFlag {
  readonly type: 'boolean';
  readonly help: string;
  readonly short?: string;
  readonly hidden?: boolean;
  /** The help of the `--no-<name>` flag that turns it off: the option is then true, false or undefined. */
  readonly negate?: string;
  /** `'undefined'`: the option is undefined (not false) when the flag is absent — a create must not send `false` for what was not asked. */
  readonly absent?: 'undefined';
}

/** A flag `--no-name` only: the option `name` is true unless it is given. */
export interface NegatedFlag {
  readonly type: 'negated';
  readonly help: string;
  readonly hidden?: boolean;
}

/** A flag with a value: `--name <value>`, or `--name [value]` with `optional` (alone it is `true`). */
export interface StringFlag {
  readonly type: 'string';
  /** The placeholder in the help: `text` shows as `--name <text>`. */
  readonly value: string;
  readonly help: string;
  readonly short?: string;
  readonly hidden?: boolean;
  readonly choices?: readonly string[];
  readonly default?: string;
  readonly required?: boolean;
  readonly optional?: boolean;
  /** Turns the typed text into the option's value (after the choices are checked); its return type is the option's type. */
  readonly parse?: (value: string) => unknown;
  /** Values completion offers without commander enforcing them (`kv upgrade --to`). */
  readonly suggest?: readonly string[];
  /** The help of a `--no-<name>` flag beside it: the option is then false when that is given. */
  readonly negate?: string;
  /** A hidden second spelling of the flag keyed so: its value fills that option when the option is not given (no field of its own). */
  readonly sameAs?: string;
  /** The key of a flag this one cannot be given with (`mock serve --state` and `--memory`): commander refuses both. */
  readonly conflicts?: string;
  /** A file or directory on this machine: a leading `~` or `~/` is the home directory (a shell leaves it after `=`). */
  readonly home?: boolean;
}

/** A flag with several values: `--name <value...>` (one or more after it), or with `repeat` `--name <value>` given again for each. */
export interface ListFlag {
  readonly type: 'list';
  readonly value: string;
  readonly help: string;
  readonly short?: string;
  readonly hidden?: boolean;
  readonly repeat?: boolean;
  readonly required?: boolean;
  /** With `repeat`: adds one typed value to the list so far (the option's type is its return type). */
  readonly collect?: (value: string, previous: never) => unknown;
  /** Each value a file or directory on this machine (after `VERSION=` when the placeholder has one): a leading `~` is the home directory. */
  readonly home?: boolean;
}

/** What a spec's `load` returns: the verb's module, with its `run(opts, ctx)`. */
export type RunModule = Promise<VerbModule<never>>;

/**
 * Flags made from a data row (tracker's field tables, `fieldFlags`): each is a flag as above, but its value
 * lands in the record `opts[key]` under the flag's own key, so a field's name can never clash with another option.
 */
export interface FieldsFlag {
  readonly type: 'fields';
  readonly flags: Readonly<Record<string, BooleanFlag | StringFlag | ListFlag>>;
}

export type FlagSpec = BooleanFlag | NegatedFlag | StringFlag | ListFlag | FieldsFlag;

/** A positional argument as commander writes it: `<name>`, `[name]`, `<name...>` or `[name...]`; the object form adds help and choices. */
export type ArgSpec = string | { readonly name: string; readonly help?: string; readonly choices?: readonly string[]; readonly field?: string };

export interface VerbSpec {
  /** The command word (a verb of a noun, or a top-level command such as `login`). */
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly args?: readonly ArgSpec[];
  /** Keyed by the option's field name; the flag is its kebab-case (`dryRun` is `--dry-run`), in this order in --help. */
  readonly flags?: Readonly<Record<string, FlagSpec>>;
  /** The one-line description. */
  readonly summary: string;
  /** Text --help prints after the options (before the examples). */
  readonly help?: string;
  readonly examples?: readonly string[];
  readonly hidden?: boolean;
  /** Options fixed when the spec is made, not typed by the user: a verb built from a data row (tracker's `resource`). */
  readonly bound?: Readonly<Record<string, string>>;
  /**
   * The verb's run module, imported only when the command runs: `load: (): RunModule => import('./x.js')`
   * (the return type written out: the run's options are inferred from this spec, so its type must not be).
   */
  readonly load: () => RunModule;
}

/** A word that only groups verbs (`labels fields …`, or a noun itself). */
export interface GroupSpec {
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly summary: string;
  readonly help?: string;
  readonly examples?: readonly string[];
  readonly verbs: readonly CommandSpec[];
}

export type CommandSpec = VerbSpec | GroupSpec;

/** Declares a verb; `const` keeps the literal flag types and argument names the options are inferred from. */
export function defineVerb<const S extends VerbSpec>(spec: S): S {
  return spec;
}

export function defineGroup<const S extends GroupSpec>(spec: S): S {
  return spec;
}

// ---------- the options type, inferred ----------

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type ArgText<A> = A extends string ? A : A extends { readonly name: infer N extends string } ? N : never;
type ArgChoice<A> = A extends { readonly choices: readonly (infer C extends string)[] } ? C : string;

type ArgField<A> = A extends { readonly field: infer F extends string }
  ? ArgText<A> extends `<${string}...>` | `[${string}...]`
    ? { [K in F]: ArgChoice<A>[] }
    : ArgText<A> extends `<${string}>`
      ? { [K in F]: ArgChoice<A> }
      : { [K in F]: ArgChoice<A> | undefined }
  : ArgText<A> extends `<${infer N}...>` | `[${infer N}...]`
    ? { [K in Camel<N>]: ArgChoice<A>[] }
    : ArgText<A> extends `<${infer N}>`
      ? { [K in Camel<N>]: ArgChoice<A> }
      : ArgText<A> extends `[${infer N}]`
        ? { [K in Camel<N>]: ArgChoice<A> | undefined }
        : never;

type ArgsOf<T> = T extends readonly [infer H, ...infer R] ? ArgField<H> & ArgsOf<R> : unknown;

type StringValue<F> = F extends { readonly parse: (value: string) => infer R }
  ? R
  : F extends { readonly choices: readonly (infer C extends string)[] }
    ? C
    : string;

type FlagValue<F> = F extends { readonly type: 'fields' }
  ? Record<string, unknown>
  : F extends { readonly type: 'boolean' }
    ? F extends { readonly negate: string } | { readonly absent: 'undefined' }
      ? boolean | undefined
      : boolean
    : F extends { readonly type: 'negated' }
      ? boolean
      : F extends { readonly type: 'string' }
        ? F extends { readonly optional: true }
          ? StringValue<F> | true | undefined
          : F extends { readonly required: true } | { readonly default: string }
            ? StringValue<F>
            : F extends { readonly negate: string }
              ? StringValue<F> | false | undefined
              : StringValue<F> | undefined
        : F extends { readonly type: 'list' }
          ? F extends { readonly collect: (value: string, previous: never) => infer R }
            ? R | undefined
            : F extends { readonly required: true }
              ? string[]
              : string[] | undefined
          : never;

type FlagsOf<T> = { -readonly [K in keyof T as T[K] extends { readonly sameAs: string } ? never : K]: FlagValue<T[K]> };

type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** The options a verb's `run` receives: one field per positional argument (camelCase) and per flag. */
export type OptionsOf<S extends VerbSpec> = Flatten<
  (S['args'] extends readonly ArgSpec[] ? ArgsOf<S['args']> : unknown) &
    (S['bound'] extends Readonly<Record<string, string>> ? { -readonly [K in keyof S['bound']]: string } : unknown) &
    (S['flags'] extends Readonly<Record<string, FlagSpec>> ? FlagsOf<S['flags']> : unknown)
>;

// ---------- the adapter: commander's values -> the inferred options ----------

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (name: string) => name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The name and shape of a positional argument (`<label>`, `[apps...]`). */
export function argShape(arg: ArgSpec): { name: string; field: string; required: boolean; variadic: boolean } {
  const text = typeof arg === 'string' ? arg : arg.name;
  const m = /^([<[])([\w|-]+)(\.\.\.)?[>\]]$/.exec(text);
  if (!m?.[2]) throw new Error(`spec: "${text}" is not an argument (<name>, [name], <name...> or [name...])`);
  return { name: m[2], field: (typeof arg === 'string' ? undefined : arg.field) ?? camel(m[2]), required: m[1] === '<', variadic: m[3] !== undefined };
}

/** The commander flags text of a flag spec: `-f, --file <path>`, `--no-browser`, `--list [maxEntries]`, `--scopes <scope...>`. */
export function flagText(key: string, flag: Exclude<FlagSpec, FieldsFlag>): string {
  const long = flag.type === 'negated' ? `--no-${kebab(key)}` : `--${kebab(key)}`;
  const short = 'short' in flag && flag.short ? `-${flag.short}, ` : '';
  if (flag.type === 'boolean' || flag.type === 'negated') return `${short}${long}`;
  if (flag.type === 'list') return `${short}${long} <${flag.value}${flag.repeat ? '' : '...'}>`;
  return `${short}${long} ${flag.optional ? `[${flag.value}]` : `<${flag.value}>`}`;
}

const appendOne = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** The commander options of one flag spec (two for a boolean with `negate`). */
export function flagOptions(key: string, flag: FlagSpec): Option[] {
  if (flag.type === 'fields') return Object.entries(flag.flags).flatMap(([k, f]) => flagOptions(k, f));
  const option = new Option(flagText(key, flag), flag.help);
  if (flag.hidden) option.hideHelp();
  if (flag.type === 'string') {
    if (flag.choices) option.choices(flag.choices);
    // after choices(): commander's parser checks them; this one replaces it (it must check them itself)
    if (flag.parse) option.argParser(flag.parse);
    if (flag.default !== undefined) option.default(flag.default);
    if (flag.required) option.makeOptionMandatory();
    if (flag.suggest) suggest(option, flag.suggest);
    if (flag.conflicts !== undefined) option.conflicts(flag.conflicts);
    if (flag.negate !== undefined) return [option, new Option(`--no-${kebab(key)}`, flag.negate)];
  }
  if (flag.type === 'list') {
    if (flag.repeat) option.argParser((flag.collect ?? appendOne) as (value: string, previous: unknown) => unknown);
    if (flag.required) option.makeOptionMandatory();
  }
  if (flag.type === 'boolean' && flag.negate !== undefined) return [option, new Option(`--no-${kebab(key)}`, flag.negate)];
  return [option];
}

/**
 * commander's values as a verb's options: each positional under its name (camelCase; a variadic one an
 * array, empty when none were given), each flag under its key — a plain boolean flag false when absent,
 * a `negate`d one (or one with `absent: 'undefined'`) undefined when not given; a `fields` flag's values in
 * one record under its key.
 */
export function toOptions<S extends VerbSpec>(spec: S, positional: readonly unknown[], flags: Readonly<Record<string, unknown>>): OptionsOf<S> {
  const out: Record<string, unknown> = { ...spec.bound };
  for (const [i, arg] of (spec.args ?? []).entries()) {
    const { field, variadic } = argShape(arg);
    const value = positional[i];
    out[field] = variadic ? (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []) : value;
  }
  const valueOf = (key: string, flag: FlagSpec): unknown => {
    const value = flags[key];
    if (flag.type === 'fields') return Object.fromEntries(Object.entries(flag.flags).map(([k, f]) => [k, valueOf(k, f)]));
    return flag.type === 'boolean' && flag.negate === undefined && flag.absent === undefined ? value === true : value;
  };
  for (const [key, flag] of Object.entries(spec.flags ?? {})) {
    if (flag.type === 'string' && flag.sameAs !== undefined) continue;
    out[key] = valueOf(key, flag);
  }
  // a second spelling fills its option when that was not given
  for (const [key, flag] of Object.entries(spec.flags ?? {})) if (flag.type === 'string' && flag.sameAs !== undefined) out[flag.sameAs] ??= flags[key];
  return out as OptionsOf<S>;
}

/**
 * Adds a verb to `parent` from its spec: arguments, flags, help, examples, and a lazy action running it with the inferred options.
 * `line`: the command line, when it names this verb and asks for no help: the verb then gets only the options the line
 * can use (lineFlag), and is marked so (builtForLine): main() builds it again in full for a parse error's words.
 */
export function addVerb(parent: Command, ctx: Context, spec: VerbSpec, { line }: { line?: readonly string[] } = {}): Command {
  const cmd = verbCommand(parent, spec);
  fillVerb(cmd, ctx, spec, line && lineWords(line));
  if (line) FOR_LINE.add(cmd);
  return cmd;
}

/** Verbs built with only the options of the command line they were built for (addVerb's `line`). */
const FOR_LINE = new WeakSet<Command>();

/** Whether a verb of `program`'s tree was built with only its command line's options (a parse error is then found again on the verb in full). */
export function builtForLine(program: Command): boolean {
  const walk = (cmd: Command): boolean => FOR_LINE.has(cmd) || cmd.commands.some(walk);
  return walk(program);
}

/** The flag spellings of a command line: `--name` (of `--name` and `--name=…`) and each `-x` of a short-flag cluster `-xyz`. */
function lineWords(line: readonly string[]): Set<string> {
  const words = new Set<string>();
  for (const word of line) {
    if (word.startsWith('--')) words.add(word.split('=')[0]!);
    else if (word.startsWith('-')) for (const c of word.slice(1)) words.add(`-${c}`);
  }
  return words;
}

/**
 * Whether a verb built for a command line with the flag spellings `words` needs the option(s) of flag `key`: the
 * ones the line spells, and the ones that give the verb a value unasked (a default, a mandatory flag, a `--no-`
 * flag and its pair). Without the others, commander parses the line as it would with every option (a word it does
 * not know is an error either way, and main() then parses again with every option, for the error's own words).
 */
function lineFlag(key: string, flag: FlagSpec, words: ReadonlySet<string>): boolean {
  if (flag.type === 'fields' || flag.type === 'negated' || ('negate' in flag && flag.negate !== undefined)) return true;
  if (('default' in flag && flag.default !== undefined) || ('required' in flag && flag.required)) return true;
  return words.has(`--${kebab(key)}`) || ('short' in flag && flag.short !== undefined && words.has(`-${flag.short}`));
}

/** The verb's command with its name, aliases and summary: all its group's --help lists of it. */
function verbCommand(parent: Command, spec: VerbSpec): Command {
  const cmd = parent.command(spec.name, spec.hidden ? { hidden: true } : {});
  for (const alias of spec.aliases ?? []) cmd.alias(alias);
  cmd.description(spec.summary);
  return cmd;
}

/** The rest of a verb's command: arguments, flags, help, examples, and its lazy action. */
function fillVerb(cmd: Command, ctx: Context, spec: VerbSpec, lineFlags?: ReadonlySet<string>): void {
  for (const arg of spec.args ?? []) {
    const text = typeof arg === 'string' ? arg : arg.name;
    const argument = new Argument(text, typeof arg === 'string' ? undefined : arg.help);
    if (typeof arg !== 'string' && arg.choices) argument.choices(arg.choices);
    cmd.addArgument(argument);
  }
  for (const [key, flag] of Object.entries(spec.flags ?? {}))
    if (!lineFlags || lineFlag(key, flag, lineFlags)) for (const option of flagOptions(key, flag)) cmd.addOption(option);
  if (spec.help !== undefined) cmd.addHelpText('after', spec.help);
  if (spec.examples?.length) examples(cmd, ...spec.examples);
  const paths =
    spec.flags && Object.values(spec.flags).some((f) => 'home' in f && f.home)
      ? (spec.flags as Readonly<Record<string, { type: string; home?: boolean }>>)
      : undefined;
  cmd.action(
    lazyAction<object>(ctx, spec.load, (args, flags) => {
      const opts = toOptions(spec, args, flags) as Record<string, unknown>;
      return paths ? expandHomeFlags(paths, opts, ctx.env.HOME) : opts;
    }),
  );
}

/** A lazy group's verbs not yet completed, and what completes each. */
const placeholders = new WeakMap<Command, () => void>();

/** Completes a lazy verb's command (its arguments and flags) before it is dispatched to; nothing for any other command. */
export function completeVerb(verb: Command): void {
  placeholders.get(verb)?.();
}

/**
 * Adds a group (a noun, or a word like `labels fields`) and every verb under it. `lazy` (kv: 40 verbs of a
 * dozen flags each) makes each verb a placeholder, its name, aliases and summary, completed when commander
 * dispatches to it or when the group's own --help is printed: a command builds the options of the verb it
 * runs, not of every verb (as the tracker builds one resource's verbs).
 */
export function addGroup(parent: Command, ctx: Context, spec: GroupSpec, { lazy = false }: { lazy?: boolean } = {}): Command {
  const cmd = groupCommand(parent, spec);
  if (!lazy) {
    addCommands(cmd, ctx, spec.verbs);
    return cmd;
  }
  addLazyVerbs(cmd, ctx, spec.verbs);
  return cmd;
}

/** A group's own command (name, aliases, summary, help, examples), without its verbs: what addGroup starts from. */
export function groupCommand(parent: Command, spec: Omit<GroupSpec, 'verbs'>): Command {
  const cmd = parent.command(spec.name);
  for (const alias of spec.aliases ?? []) cmd.alias(alias);
  cmd.description(spec.summary);
  if (spec.help !== undefined) cmd.addHelpText('after', spec.help);
  if (spec.examples?.length) examples(cmd, ...spec.examples);
  return cmd;
}

/**
 * Adds `verbs` under `cmd` as placeholders (name, aliases, summary), each completed when commander dispatches to
 * it or when `cmd`'s own --help is printed (which lists each verb with its arguments and [options]).
 */
export function addLazyVerbs(cmd: Command, ctx: Context, verbs: readonly CommandSpec[]): void {
  const fills = new Map<string, () => void>();
  for (const verb of verbs) {
    if ('verbs' in verb) {
      addGroup(cmd, ctx, verb, { lazy: true });
      continue;
    }
    const sub = verbCommand(cmd, verb);
    let filled = false;
    const fill = () => {
      if (filled) return;
      filled = true;
      fillVerb(sub, ctx, verb);
    };
    fills.set(verb.name, fill);
    placeholders.set(sub, fill);
  }
  cmd.hook('preSubcommand', (_group, sub) => fills.get(sub.name())?.());
  // the group's --help lists each verb with its arguments and [options]
  cmd.on('beforeHelp', () => fills.forEach((fill) => fill()));
}

/** Adds each verb or group of a list, in order (the order of --help). */
export function addCommands(parent: Command, ctx: Context, specs: readonly CommandSpec[]): void {
  for (const spec of specs) {
    if ('verbs' in spec) addGroup(parent, ctx, spec);
    else addVerb(parent, ctx, spec);
  }
}

/** The root of the command tree a command belongs to (what `help` and `completion` describe). */
export function rootOf(cmd: Command): Command {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root;
}

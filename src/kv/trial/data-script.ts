/**
 * The POSIX shell script of a data trial (trial/data.ts), sent to the member's host like the settings
 * trial's (`sh -s` here, the trial template there), and what it prints back. In order:
 * 1. refuses, before anything is written, where it cannot work: no network namespace to isolate the copy
 *    in (`unshare -n` as root, `unshare -rn` where unprivileged user namespaces are allowed), no `ip` to
 *    bring the namespace's loopback up, no etcdctl, the member's data dir missing or unreadable, too
 *    little space for the copy (`df`, 5% of the file system kept free for the members);
 * 2. copies the member's data without stopping it, consistent: its v2 snapshot files (member/snap/*.snap)
 *    first, then its db by `etcdctl snapshot save` from its own client URL (the stream's sha256 trailer
 *    verified, then cut off), then its WAL files (so they cover everything the db holds; etcd repairs a torn
 *    last record itself); a new .snap written meanwhile (the WAL purged behind it) means a new copy;
 * 3. starts the target on the copy, in a network namespace of its own (the copy holds the member's ID and
 *    its peers' URLs: nothing in it can reach them), with --force-new-cluster (alone, it can serve), until
 *    it answers a serializable read (the copy's revision R), exits, or the deadline passes; then the
 *    copy's HashKV at R, and the live member's at R, outside the namespace.
 * A trap kills the copy's process and removes the copy, whatever happens. Every value is a single-quoted
 * shell word; the credentials are variables of the script (its standard input), never an argument.
 */
import { shellWord } from '../drivers/host-script.js';
import type { TrialPlan } from './rewrite.js';
import { PATH } from './script.js';

export interface DataScriptInput {
  /** The scratch dir (its parent must exist): the copy, the config files, the log. */
  dir: string;
  /**
   * The targets to start on the copy, in order (the ladder's hops): each one's start from
   * trialPlan(…, { dataCopy: true }) with `dir`, the same ports; `askVersion` where its release is not known.
   */
  steps: Array<{ plan: TrialPlan; askVersion?: boolean }>;
  /** The member's own data dir and, where it sets one, its WAL dir (absolute, on its host). */
  source: { dataDir: string; walDir?: string };
  /** The live member's client URL, asked from its own host. */
  endpoint: string;
  /** etcdctl to use, in order (the target's first); the host's PATH is tried after them. */
  etcdctl: string[];
  /** etcdctl's TLS flags for the live member and for the copy (paths on the host). */
  liveTls: string[];
  copyTls: string[];
  /** The member's user and password where auth is on (ETCDCTL_USER, a variable of the script). */
  credentials?: { user: string; password: string };
  /** The member's user: the copy's process runs as it where the script runs as root. */
  user?: { uid: number; gid: number };
  /** Seconds the target may take to answer on the copy; seconds the snapshot may take. */
  timeoutS: number;
  copyTimeoutS: number;
  /** A here-document delimiter that occurs in no text the script carries. */
  delimiter: string;
}

/** What a step says in place of the copy's hash where it was not asked (hashCopy false). */
export const NOT_HASHED = 'not hashed: the live member has no HashKV to compare with';

/** Room the target needs beyond the copy: a new WAL segment (64 MB, preallocated) and its own writes. */
const HEADROOM_KB = 128 * 1024;

export function dataScript(i: DataScriptInput): string {
  if (!i.steps.length) throw new Error('a data trial needs a target');
  for (const s of i.steps) {
    if (s.plan.dir !== i.dir) throw new Error(`a step's plan is not in the scratch dir ${i.dir}`);
    if (s.plan.config?.text.includes(i.delimiter)) throw new Error('the here-document delimiter occurs in the config file');
  }
  const w = shellWord;
  const copyWal = i.source.walDir ? `${i.dir}/wal` : `${i.dir}/data/member/wal`;
  const lines = [
    'set -u',
    'umask 077',
    // (a closed connection must not kill the script before its trap has cleaned up)
    "trap '' PIPE",
    'say() { printf "opsctl-data: %s\\n" "$*"; }',
    'no() { say "not $*"; exit 0; }',
    `dir=${w(i.dir)}`,
    `src=${w(i.source.dataDir)}`,
    `srcwal=${w(i.source.walDir ?? `${i.source.dataDir}/member/wal`)}`,
    `copywal=${w(copyWal)}`,
    `endpoint=${w(i.endpoint)}`,
    'ipid=',
    'vpids=',
    'start=$(date +%s)',
    't0=$(date +%s%N 2>/dev/null)',
    'ms() { n=$(date +%s%N 2>/dev/null); case $n$t0 in *N*|"") echo $(( ($(date +%s) - start) * 1000 ));; *) echo $(( (n - t0) / 1000000 ));; esac; }',
    // Nothing of the caller's own etcdctl settings applies (ETCDCTL_ENDPOINTS would point every call elsewhere).
    'for v in $(env | sed -n "s/^\\(ETCDCTL_[A-Z0-9_]*\\)=.*/\\1/p"); do unset "$v"; done',
    'ETCDCTL_API=3; export ETCDCTL_API',
    ...(i.credentials ? [`ETCDCTL_USER=${w(`${i.credentials.user}:${i.credentials.password}`)}; export ETCDCTL_USER`] : []),
    'PATH="${PATH:-/usr/bin:/bin}:/usr/sbin:/sbin"; export PATH',
    ...isolation(),
    ...etcdctl(i),
    ...dataChecks(),
    ...space(),
    'mkdir "$dir" || no "error cannot create $dir"',
    'cleanup() {',
    // the copy's process (by the PID it wrote, and only while it is the copy's: its command line names the scratch dir)
    '  if [ -s "$dir/etcd.pid" ]; then',
    '    q=$(cat "$dir/etcd.pid")',
    '    tr "\\000" " " <"/proc/$q/cmdline" 2>/dev/null | grep -qF "$dir" && kill -9 "$q" 2>/dev/null',
    '  fi',
    '  if [ -n "$ipid" ]; then kill -9 "$ipid" 2>/dev/null; wait "$ipid" 2>/dev/null; fi',
    '  [ -z "$vpids" ] || wait $vpids 2>/dev/null',
    '  rm -rf "$dir"',
    '}',
    'trap cleanup EXIT',
    ...versions(i),
    "trap 'exit 130' INT TERM HUP",
    `lctl() { "$ctl" --endpoints "$endpoint" ${i.liveTls.map(w).join(' ')} --dial-timeout 5s "$@"; }`,
    'revision() { sed -n "s/.*\\"revision\\":\\([0-9]*\\).*/\\1/p" | head -n 1; }',
    'rev0=$(lctl --command-timeout 10s get opsctl-data-trial-probe --consistency=s -w json 2>"$dir/err" | revision)',
    '[ -n "$rev0" ] || no "live the member did not answer a read at $endpoint: $(grep -v "^{" "$dir/err" | tail -n 1)"',
    'say "liverev $rev0"',
    // the live member's release (its status; no hashing): etcd 3.2 has no HashKV to compare the copy's with
    'lver=$(lctl --command-timeout 10s endpoint status -w json 2>/dev/null | sed -n "s/.*\\"version\\":\\"\\([0-9.]*\\)\\".*/\\1/p" | head -n 1)',
    'case $lver in 3.0.*|3.1.*|3.2.*) hashcopy=0 ;; *) hashcopy=1 ;; esac',
    ...copy(i, copyWal),
    ...startCopy(i),
    'say done',
  ];
  return `${lines.join('\n')}\n`;
}

/** A network namespace of its own for the copy: `unshare -n` as root, else `unshare -rn` (an unprivileged user namespace). */
function isolation(): string[] {
  return [
    'asroot="run the trial as root (a trial template such as \\`ssh {host} sudo sh -s\\`)"',
    '[ -e /proc/self/ns/net ] || no "iso this host has no network namespaces (no /proc/self/ns/net): the data trial needs Linux"',
    'command -v unshare >/dev/null 2>&1 || no "iso unshare (util-linux) is not on the host\'s PATH: install util-linux"',
    'command -v ip >/dev/null 2>&1 || no "iso ip (iproute2) is not on the host\'s PATH (it brings the namespace\'s loopback up): install iproute2"',
    'iso=',
    'if [ "$(id -u)" = 0 ]; then',
    '  if why=$(unshare -n ip link set lo up 2>&1); then iso="unshare -n"',
    '  else no "iso unshare -n failed as root ($why): a container without CAP_SYS_ADMIN makes none; run the trial on the host itself"; fi',
    'elif why=$(unshare -rn ip link set lo up 2>&1); then iso="unshare -rn"',
    'else no "iso the trial runs as uid $(id -u), not root, and this host allows no unprivileged user namespace (unshare -rn: $why): $asroot' +
      ' or allow them (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces)"',
    'fi',
    'say "iso $iso"',
  ];
}

function etcdctl(i: DataScriptInput): string[] {
  return [
    'ctl=',
    `for c in ${i.etcdctl.map(shellWord).join(' ')}; do if [ -x "$c" ]; then ctl=$c; break; fi; done`,
    '[ -n "$ctl" ] || ctl=$(command -v etcdctl 2>/dev/null)',
    `[ -n "$ctl" ] || no "etcdctl no etcdctl beside the target (${i.etcdctl.join(', ') || 'no binary dir known'}) or on the host's PATH"`,
    'say "etcdctl $ctl"',
  ];
}

function dataChecks(): string[] {
  return [
    '[ -d "$src/member" ] || no "data $src/member is not there: the member\'s data dir is not $src"',
    'ls "$src/member/snap" >/dev/null 2>&1 || no "data $src/member/snap cannot be read as uid $(id -u): $asroot or as the member\'s user"',
    'ls "$srcwal" >/dev/null 2>&1 || no "data the WAL dir $srcwal cannot be read as uid $(id -u): $asroot or as the member\'s user"',
    'set -- "$srcwal"/*.wal',
    '[ -e "$1" ] || no "data no WAL file in $srcwal"',
    // (a member whose db is gone keeps running on the open file; nothing of it to copy: the v2-without-v3-db rule says so)
    '[ -e "$src/member/snap/db" ] || no "data no v3 database: $src/member/snap/db is missing"',
  ];
}

/** The copy's room, asked before anything is written: the snap dir (the db) and the WAL as they are, and the target's own headroom. */
function space(): string[] {
  return [
    'kb() { du -sk "$1" 2>/dev/null | awk \'{print $1}\'; }',
    'snapk=$(kb "$src/member/snap"); walk=$(kb "$srcwal")',
    '[ -n "$snapk" ] && [ -n "$walk" ] || no "data the size of $src cannot be read"',
    `need=$((snapk + walk + ${HEADROOM_KB}))`,
    'base=$(dirname "$dir")',
    'set -- $(df -Pk "$base" 2>/dev/null | awk \'NR==2 {print $2, $4}\')',
    '[ $# = 2 ] || no "space df cannot read $base"',
    'reserve=$(($1 / 20))',
    'if [ "$2" -lt $((need + reserve)) ]; then',
    '  no "space the copy needs $((need / 1024)) MB on $base (snap dir $((snapk / 1024)) MB, WAL $((walk / 1024)) MB, $((' +
      `${HEADROOM_KB} / 1024)) MB for the target's own WAL), which has $(($2 / 1024)) MB free of which 5% stays free: free space there"`,
    'fi',
  ];
}

function copy(i: DataScriptInput, copyWal: string): string[] {
  const nested = copyWal.startsWith(`${i.dir}/data/`);
  return [
    'snaps() { ls "$src/member/snap" 2>/dev/null | grep "\\.snap$" | tr "\\n" " "; }',
    'attempt=0',
    'while :; do',
    '  attempt=$((attempt + 1))',
    `  rm -rf "$dir/data"${nested ? '' : ' "$copywal"'}`,
    '  mkdir -p "$dir/data/member/snap" "$copywal" || no "error cannot create the copy in $dir"',
    // v2 snapshot files first: the db saved next holds at least what the newest of them does
    '  before=$(snaps)',
    '  for f in $before; do',
    '    cp "$src/member/snap/$f" "$dir/data/member/snap/" 2>/dev/null || [ ! -e "$src/member/snap/$f" ] || no "data cannot copy $src/member/snap/$f"',
    '  done',
    '  a=$(ms)',
    `  lctl --command-timeout ${i.copyTimeoutS}s snapshot save "$dir/db" >"$dir/err" 2>&1 ||`,
    '    no "snapshot etcdctl snapshot save from $endpoint failed: $(grep -v "^{" "$dir/err" | tail -n 1)"',
    '  size=$(wc -c <"$dir/db" | tr -d " ")',
    // the stream's last 32 bytes: the sha256 of the rest (a bbolt file is whole pages, so its size is a multiple of 512 without them),
    // read, then cut off, then the rest hashed in place: openssl's SHA-256 (the CPU's SHA instructions, ~6x sha256sum's speed
    // on 124 MB: 0.1 against 0.6 s of CPU) where the host has it, else sha256sum
    '  if [ $((size % 512)) = 32 ]; then',
    '    want=$(tail -c 32 "$dir/db" | od -An -vtx1 | tr -d " \\n")',
    '    body=$((size - 32))',
    '    truncate -s "$body" "$dir/db" 2>/dev/null ||',
    '      { head -c "$body" "$dir/db" >"$dir/db.cut" && mv "$dir/db.cut" "$dir/db"; } || no "error cannot cut the trailer"',
    '    got=',
    '    if command -v openssl >/dev/null 2>&1; then got=$(openssl dgst -sha256 -r "$dir/db" 2>/dev/null | cut -d " " -f 1); fi',
    '    if [ -z "$got" ] && command -v sha256sum >/dev/null 2>&1; then got=$(sha256sum "$dir/db" | cut -d " " -f 1); fi',
    '    if [ -n "$got" ]; then',
    '      [ "$want" = "$got" ] || no "snapshot the snapshot\'s sha256 $got is not its trailer\'s $want: the stream was damaged on the way"',
    '      say "sha256 verified"',
    '    else say "sha256 not verified: no openssl or sha256sum on the host"; fi',
    '  else say "sha256 no trailer"; fi',
    '  mv "$dir/db" "$dir/data/member/snap/db" || no "error cannot place the db"',
    '  b=$(ms)',
    // then the WAL (preallocated zeros left sparse): it covers everything the db holds
    '  for f in "$src/member/snap/"*.snap.db "$srcwal"/*.wal; do',
    '    [ -e "$f" ] || continue',
    '    case $f in *.wal) to=$copywal;; *) to="$dir/data/member/snap";; esac',
    '    cp --sparse=always "$f" "$to/" 2>/dev/null || cp "$f" "$to/" 2>/dev/null || [ ! -e "$f" ] || no "data cannot copy $f"',
    '  done',
    '  c=$(ms)',
    '  [ "$(snaps)" = "$before" ] && break',
    '  [ "$attempt" -lt 3 ] || no "busy the member wrote a new v2 snapshot file during each of 3 copies (heavy writes)"',
    'done',
    'say "copied $attempt $((b - a)) $((c - b)) $(wc -c <"$dir/data/member/snap/db" | tr -d " ") $(ls "$copywal" | grep -c "\\.wal$") $(echo $before | wc -w)"',
  ];
}

/**
 * The inner script (in the namespace): each step's target on the copy in turn, until it answers, exits, or
 * its deadline; the copy's hash at its revision; a step before the last stopped gracefully (SIGTERM), so
 * the next starts on the data the one before wrote, as the ladder's next hop will. The first failure ends it.
 */
function inner(i: DataScriptInput): string {
  const lines = [
    'set -u',
    "trap '' PIPE",
    'dir=$1; ctl=$2; as=$3; hashcopy=$4',
    'say() { printf "opsctl-data: %s\\n" "$*"; }',
    'start=$(date +%s)',
    't0=$(date +%s%N 2>/dev/null)',
    'ms() { n=$(date +%s%N 2>/dev/null); case $n$t0 in *N*|"") echo $(( ($(date +%s) - start) * 1000 ));; *) echo $(( (n - t0) / 1000000 ));; esac; }',
    'pid=',
    'stop() {',
    '  if [ -n "$pid" ]; then [ -s "$dir/etcd.pid" ] && kill -9 "$(cat "$dir/etcd.pid")" 2>/dev/null; kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi',
    '  rm -f "$dir/etcd.pid"',
    '}',
    'trap stop EXIT',
    "trap 'exit 130' INT TERM HUP",
    'ip link set lo up 2>/dev/null || { say "not iso the namespace\'s loopback cannot be brought up"; exit 0; }',
    `cctl() { "$ctl" --endpoints ${shellWord(i.steps[0]!.plan.clientUrl)} ${i.copyTls.map(shellWord).join(' ')} --dial-timeout 2s "$@"; }`,
    'endlog() { say "step $1 log"; tail -c 8000 "$dir/log"; printf "\\n"; say "step $1 endlog"; }',
    // Until step $1's target answers a serializable read ($rev), asked once its log says it serves clients
    // (etcd 3.0 to 3.6 alike) or every 2 s where its log goes elsewhere: an exit is seen within 50 ms.
    'ready() {',
    '  t1=$(ms); polls=0',
    `  deadline=$(($(date +%s) + ${Math.max(1, Math.round(i.timeoutS))}))`,
    '  while :; do',
    '    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; code=$?; pid=; say "step $1 exited $code $(($(ms) - t1))"; endlog "$1"; exit 0; fi',
    '    polls=$((polls + 1))',
    '    if grep -qs "ready to serve client requests" "$dir/log" || [ $((polls % 40)) = 0 ]; then',
    '      out=$(cctl --command-timeout 3s get opsctl-data-trial-probe --consistency=s -w json 2>"$dir/cerr")',
    '      rev=$(printf "%s" "$out" | sed -n "s/.*\\"revision\\":\\([0-9]*\\).*/\\1/p" | head -n 1)',
    '      [ -n "$rev" ] && break',
    '      if [ "$(date +%s)" -ge "$deadline" ]; then say "step $1 timeout $(($(ms) - t1)) $(grep "^Error" "$dir/cerr" | tail -n 1)"; endlog "$1"; exit 0; fi',
    '    elif [ $((polls % 20)) = 0 ] && [ "$(date +%s)" -ge "$deadline" ]; then',
    '      say "step $1 timeout $(($(ms) - t1)) it never said it serves clients"; endlog "$1"; exit 0',
    '    fi',
    '    sleep 0.05 2>/dev/null || sleep 1',
    '  done',
    '  say "step $1 ready $(($(ms) - t1)) $rev"',
    // every step hashed at the first one's revision (the live member is asked there once)
    '  hr=$(cat "$dir/rev" 2>/dev/null); [ -n "$hr" ] || { hr=$rev; echo "$rev" >"$dir/rev"; }',
    // (a live member of etcd 3.2 has no HashKV: no hash of the copy could be compared, so none is asked)
    `  [ "$hashcopy" = 1 ] || { say "step $1 copyhash "; say "step $1 copyhasherr ${NOT_HASHED}"; return; }`,
    '  a=$(ms)',
    '  h=$(cctl --command-timeout 30s endpoint hashkv --rev "$hr" -w json 2>"$dir/cerr")',
    // compacted at its own head (a compaction, then no write): no hash at that revision, but the head's is the
    // same content; the live member is then hashed at its head too, compared only where it is still there
    // (etcdctl prints "null" on its standard output when the hash fails: the error is what is read)
    '  if [ "$hr" = "$rev" ] && grep -q "compacted" "$dir/cerr"; then',
    '    echo 0 >"$dir/rev"; say "hashhead $rev"',
    '    h=$(cctl --command-timeout 30s endpoint hashkv --rev 0 -w json 2>"$dir/cerr")',
    '  fi',
    '  say "step $1 copyhash $(printf "%s" "$h" | tr "\\n" " ")"',
    '  say "step $1 copyhasherr $(grep -v "^{" "$dir/cerr" | tail -n 2 | tr "\\n" " ")"',
    '  say "step $1 hashms $(($(ms) - a))"',
    '}',
    // A graceful stop (etcd closes its WAL and db), as the ladder stops a member; killed after 30 s.
    'halt() {',
    '  a=$(ms); kill -TERM "$pid" 2>/dev/null; n=0',
    '  while kill -0 "$pid" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.05 2>/dev/null || sleep 1; n=$((n + 1)); done',
    '  [ $n -lt 600 ] || say "note step $1: killed after 30 s of SIGTERM"',
    '  stop; pid=',
    '  say "step $1 stopped $(($(ms) - a))"',
    '}',
  ];
  i.steps.forEach((step, n) => {
    const p = step.plan;
    const env = Object.entries(p.env).map(([k, v]) => shellWord(`${k}=${v}`));
    const cmd = ['env', '-i', shellWord(`PATH=${PATH}`), ...env, ...p.program.map(shellWord), ...p.args.map(shellWord)].join(' ');
    if (step.askVersion) lines.push(`v=; read -r v <"$dir/version-${n}" 2>/dev/null; say "step ${n} version $v"`);
    if (p.config) lines.push(`cp "$dir/step-${n}.conf.yml" ${shellWord(p.config.path)}`);
    lines.push(
      `cd ${shellWord(p.cwd)} 2>/dev/null || cd "$dir"`,
      // the PID of etcd itself (runuser forks; the shell execs it): the outer trap kills it by this file
      `$as sh -c 'echo $$ >"$0"; exec "$@"' "$dir/etcd.pid" ${cmd} >"$dir/log" 2>&1 </dev/null &`,
      'pid=$!',
      `ready ${n}`,
      ...(n < i.steps.length - 1 ? [`halt ${n}`] : []),
    );
  });
  return lines.join('\n');
}

/** Each target asked its version (where a step asks it) while the copy is made, all at once: the answers wait in the scratch dir. */
function versions(i: DataScriptInput): string[] {
  return i.steps.flatMap((s, n) =>
    s.askVersion
      ? [
          `(${s.plan.program.map(shellWord).join(' ')} --version 2>/dev/null | sed -n 's/^etcd Version: //p' | head -n 1 >"$dir/version-${n}") & vpids="$vpids $!"`,
        ]
      : [],
  );
}

function startCopy(i: DataScriptInput): string[] {
  // (the versions asked meanwhile are in, before the scratch dir changes hands)
  const lines: string[] = ['[ -z "$vpids" ] || wait $vpids 2>/dev/null', 'vpids='];
  i.steps.forEach((s, n) => {
    if (s.plan.config) lines.push(`cat >"$dir/step-${n}.conf.yml" <<'${i.delimiter}'`, s.plan.config.text.replace(/\n?$/, '\n') + i.delimiter);
  });
  const text = inner(i);
  if (text.includes(i.delimiter)) throw new Error('the here-document delimiter occurs in the script');
  lines.push(`cat >"$dir/inner.sh" <<'${i.delimiter}'`, text, i.delimiter);
  lines.push('as=');
  if (i.user && i.user.uid !== 0) {
    const { uid, gid } = i.user;
    // As the member's own user where this runs as root (setpriv execs: its PID is etcd's); in a user namespace, as this user.
    lines.push(
      `if [ "$(id -u)" = 0 ]; then`,
      `  chown -R ${uid}:${gid} "$dir"`,
      `  if command -v setpriv >/dev/null 2>&1; then as="setpriv --reuid=${uid} --regid=${gid} --clear-groups"`,
      `  elif command -v runuser >/dev/null 2>&1 && who=$(getent passwd ${uid} | cut -d: -f1) && [ -n "$who" ]; then as="runuser -u $who --"`,
      `  else say "note runs as root: no setpriv or runuser to take uid ${uid}"; fi`,
      'fi',
    );
  }
  lines.push(
    '$iso sh "$dir/inner.sh" "$dir" "$ctl" "$as" "$hashcopy" &',
    'ipid=$!',
    'wait "$ipid"',
    'ipid=',
    // the live member's hash at the copy's revision (the same for every step: nothing writes to the copy)
    'if [ -s "$dir/rev" ]; then',
    '  a=$(ms)',
    '  h=$(lctl --command-timeout 30s endpoint hashkv --rev "$(cat "$dir/rev")" -w json 2>"$dir/err")',
    '  say "livehash $(printf "%s" "$h" | tr "\\n" " ")"',
    '  say "livehasherr $(grep -v "^{" "$dir/err" | tail -n 2 | tr "\\n" " ")"',
    '  say "livehashms $(($(ms) - a))"',
    'fi',
  );
  return lines;
}

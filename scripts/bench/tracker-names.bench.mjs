// Names instead of ids and --jq (issue 19): how many list requests name resolution adds (counted in the
// mock's request log: at most one per kind of record, however many flags name one), and that --jq leaves
// start-up alone (jq-wasm, bundled as its own chunk dist/chunks/inline-*.cjs, is loaded only by a command given --jq; its cost is measured there).
// test/helpers/record-modules.cjs reports each script of bin/ and dist/ the process reads (node --require).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { run, serve } from './tracker.bench.mjs';

const requests = async (url) => (await fetch(`${url}/__mock/requests`)).json();
const clear = (url) => fetch(`${url}/__mock/requests`, { method: 'DELETE' });
const HOOKS = fileURLToPath(new URL('../../test/helpers/record-modules.cjs', import.meta.url));

export default async function trackerNames(report, { BIN, tempDir, interleaved }) {
  const dir = tempDir('opsctl-bench-names-');
  const mock = await serve(BIN, ['--memory']);
  try {
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.tracker_token };
    const must = async (args) => {
      const r = await run(BIN, args, env);
      if (r.code !== 0) throw new Error(`${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r;
    };
    await must(['tracker', 'epics', 'create', '--name', 'Q3 launch']);
    await must(['tracker', 'iterations', 'create', '--name', 'Sprint 1', '--start-date', '2026-01-05', '--end-date', '2026-01-19']);
    await must(['tracker', 'groups', 'create', '--name', 'Platform', '--mention-name', 'platform']);
    for (let i = 0; i < 50; i++) await must(['tracker', 'labels', 'create', '--name', `label-${i}`]);

    // 1. a story created with 8 name-taking flags over 5 kinds: members (3 flags + @me), epic, iteration, group, state
    const named = [
      'tracker',
      'stories',
      'create',
      '--name',
      'by names',
      '--owner-ids',
      '@me,ada',
      '--follower-ids',
      'ada@example.com',
      '--requested-by-id',
      'owner',
      '--epic-id',
      'q3 launch',
      '--iteration-id',
      'sprint 1',
      '--group-id',
      'platform',
      '--workflow-state-id',
      'In Progress',
    ];
    await clear(mock.url);
    await must(named);
    const log = (await requests(mock.url)).filter((q) => q.path.startsWith('/api/v3/'));
    const lists = log.filter((q) => q.method === 'GET');
    const perPath = new Map();
    for (const q of lists) perPath.set(q.path, (perPath.get(q.path) ?? 0) + 1);
    const worst = Math.max(...perPath.values());
    report.row(
      'tracker names: stories create, 8 named flags, 5 kinds',
      `${lists.length} reads (${[...perPath].map(([p, n]) => `${p.slice(8)} ${n}`).join(', ')}) + ${log.length - lists.length} write`,
      '<= 1 list per kind',
      worst <= 1 && log.length - lists.length === 1,
    );

    // 2. the same story by ids: no lookups at all
    const ids = JSON.parse((await must([...named, '--json=owner_ids,epic_id,iteration_id,group_id,workflow_state_id'])).stdout);
    await clear(mock.url);
    await must([
      'tracker',
      'stories',
      'create',
      '--name',
      'by ids',
      '--owner-ids',
      ids.owner_ids.join(','),
      '--epic-id',
      String(ids.epic_id),
      '--iteration-id',
      String(ids.iteration_id),
      '--group-id',
      ids.group_id,
      '--workflow-state-id',
      String(ids.workflow_state_id),
    ]);
    const idLog = (await requests(mock.url)).filter((q) => q.path.startsWith('/api/v3/'));
    report.row(
      'tracker names: the same story by ids',
      `${idLog.length} request (${idLog.filter((q) => q.method === 'GET').length} reads)`,
      '0 lookups',
      idLog.length === 1,
    );

    // 3. --jq at start-up: not loaded by --version, --help or a list without it; loaded by a list with it
    const record = (args) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, ['--require', HOOKS, BIN, ...args], {
          env: { ...process.env, ...env, OPSCTL_RECORD_MODULES: '1' },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (c) => (err += c));
        child.on('exit', () => resolve(err.split('\n').some((l) => l.startsWith('loaded ') && /\/dist\/chunks\/inline-[^/]*\.cjs$/.test(l))));
      });
    const startUp = [await record(['--version']), await record(['--help']), await record(['tracker', 'labels', 'list'])];
    const withJq = await record(['tracker', 'labels', 'list', '--jq', 'length']);
    report.row(
      '--jq: jq-wasm loaded by --version / --help / list',
      startUp.map((x) => (x ? 'yes' : 'no')).join(' / '),
      'no / no / no',
      startUp.every((x) => !x) && withJq,
    );

    // 4. what --jq costs the command that uses it (CPU, against the same list without it)
    const results = await interleaved(
      [
        { name: 'list', args: [BIN, 'tracker', 'labels', 'list', '--json'], env },
        { name: 'list --jq', args: [BIN, 'tracker', 'labels', 'list', '--jq', '.[].name'], env },
      ],
      Number(process.env.BENCH_ROUNDS ?? 15),
    );
    const extra = results['list --jq'].cpuMs - results.list.cpuMs;
    report.row(
      '--jq: tracker labels list (50 labels), CPU added',
      `+${extra.toFixed(1)} ms (${results.list.cpuMs.toFixed(1)} -> ${results['list --jq'].cpuMs.toFixed(1)} ms)`,
      '<= +150 ms',
      extra <= 150,
    );
  } finally {
    await mock.stop();
  }
}

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { helpers } from './kv-etcd.bench.mjs';
const ROOT = new URL('../..', import.meta.url).pathname;
const h = await helpers(ROOT);
h.prepareEtcdReleases(process.env);
h.prepareLadderReleases(process.env);
const dirs = h.etcdLadderDirs(process.env);
const c = await h.realCluster({ size: 3, bins: { 3.5: dirs.v35, 3.6: dirs.v36 } });
try {
  for (const m of c.members) c.start(m, '3.5');
  for (let i = 0; i < 100; i++) { try { const r = await fetch(`${c.members[0].clientUrl}/version`); if ((await r.json()).etcdcluster === '3.5.0') break; } catch {} await new Promise((r) => setTimeout(r, 200)); }
  const file = h.writeCommandClusterFile(join(c.dir, 'cluster.yaml'), c, { extra: ['trial: sh -s', `settings: echo --config-file=${c.dir}/{name}/etcd.yaml`] });
  const t0 = Date.now();
  let out = '';
  try {
    out = execFileSync('sh', ['-c', 'exec "$0" "$@" 2>/tmp/parent-stderr.txt', process.execPath, join(ROOT, 'bin/opsctl.cjs'), 'kv', 'upgrade', '--to', '3.6', '--cluster', file, '--poll-interval', '100ms', '--no-backup', '--rehearse', '--debug'], {
      env: { ...process.env, OPSCTL_CONFIG_DIR: join(c.dir, 'opsctl'), NO_COLOR: '1', CI: '1', STAMP_T0: String(t0), NODE_OPTIONS: '--require /tmp/stamp.cjs' },
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26,
    });
  } catch (e) { out = String(e.stderr); }
  console.log('total', Date.now() - t0);
} finally { c.destroy(); }

import { escapeHtml as e } from '../../auth/html.js';
import { describeFates, type UpgradeReportDoc } from './report.js';
import { humanBytes } from '../backups/backups.js';

/**
 * The upgrade report as one self-contained HTML page: inline CSS, no script, no external resource,
 * every value from the journal escaped. Readable at a glance: a status line, the plan, a timeline of
 * each member's down window, then the health checks, snapshots and the cluster version step.
 */
export function reportHtml(r: UpgradeReportDoc): string {
  const title = r.ladder ? `kv upgrade ${r.ladder.from} → ${r.ladder.to} (ladder): ${r.ladder.status}` : `kv upgrade ${r.source} → ${r.target}: ${r.status}`;
  const main = hopSections(r, '');
  const clock = (iso?: string) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');
  const status = r.ladder ? r.ladder.status : r.status;
  const statusClass = status === 'done' ? 'ok' : status === 'halted' || status === 'interrupted' ? 'bad' : 'warn';
  const ladder = r.ladder
    ? `<h2>Ladder: ${e(r.ladder.from)} → ${e(r.ladder.to)}, hop by hop</h2>
<table id="ladder"><thead><tr><th>#</th><th>hop</th><th>status</th><th>run</th><th>started</th><th>last record</th></tr></thead><tbody>
${r.ladder.hops.map((h, i) => `<tr data-hop="${e(h.name)}"><td>${i + 1}</td><td><b>${e(h.name)}</b></td><td><span class="pill ${e(h.status)}">${e(h.status)}</span></td><td>${e(h.run ?? '')}</td><td class="nw">${e(clock(h.startedAt))}</td><td class="nw">${e(clock(h.updatedAt))}</td></tr>`).join('\n')}
</tbody></table>
<p class="meta">ladder file <code>${e(r.ladder.file)}</code></p>`
    : '';
  const interruptions = r.interruptions.length
    ? r.interruptions
        .map(
          (i) =>
            `<tr data-how="${e(i.how)}">${r.ladder ? `<td class="nw">${e(i.hop ?? '')}</td>` : ''}<td class="nw">${e(clock(i.stoppedAt))}</td><td><b>${e(HOW[i.how] ?? i.how)}</b></td><td>${e(i.detail ?? '')}</td><td class="nw">${i.resumedAt ? e(clock(i.resumedAt)) : '<i>not resumed</i>'}</td><td class="num nw">${i.gapMs === undefined ? '' : e(secs(i.gapMs))}</td></tr>`,
        )
        .join('\n')
    : `<tr><td colspan="${r.ladder ? 6 : 5}" class="muted">none: ${r.runs.length > 1 ? `${r.runs.length} runs` : 'one run'} from start to end</td></tr>`;
  const rps = r.restorePoints.length
    ? r.restorePoints
        .map(
          (p) =>
            `<tr data-hop="${e(p.hop)}"><td class="nw">${e(p.hop)}</td><td class="num">${e(p.revision)}</td><td class="num">${p.keys === undefined ? '' : e(String(p.keys))}</td><td><code>${e(p.file)}</code>${p.present ? '' : ' <i>file gone</i>'}</td><td><code class="cmd">${e(p.command)}</code></td></tr>`,
        )
        .join('\n')
    : '<tr><td colspan="5" class="muted">no restore point was taken</td></tr>';
  const b = r.backups;
  const backups = `<p id="backups-total"><b>${e(humanBytes(b.bytes))}</b> (${e(b.bytes.toLocaleString('en-US'))} bytes) in ${b.items.length} item(s)${b.dirs.length ? ` under ${b.dirs.map((d) => `<code>${e(d)}</code>`).join(', ')}` : ''}; remove old ones with <code>opsctl kv backups prune --keep N</code></p>${b.remote ? `<p class="meta">${e(b.remote)}</p>` : ''}${b.copies?.length ? `<p class="meta" id="backups-copies">${e(describeFates(b.copies) ?? '')}</p>` : ''}
<table id="backups"><thead><tr><th>member</th><th>kind</th><th>bytes</th><th>path</th></tr></thead><tbody>
${b.items.map((i) => `<tr><td>${e(i.member)}</td><td>${e(i.kind)}</td><td class="num">${e(i.bytes.toLocaleString('en-US'))}</td><td><code>${e(i.path)}</code></td></tr>`).join('\n') || '<tr><td colspan="4" class="muted">none on this machine</td></tr>'}
</tbody></table>`;
  const earlier = (r.ladder?.hops ?? [])
    .filter((h) => h.report)
    .map(
      (h, i) =>
        `<details class="hop" data-hop="${e(h.name)}"><summary><b>Hop ${e(h.name)}</b>: ${e(h.status)} · run ${e(h.run ?? '')}</summary>\n${hopSections(h.report!, `h${i + 1}-`)}\n</details>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${e(title)}</title>
<style>${CSS}</style>
</head><body>
<h1>${e(title.replace(/: [^:]*$/, ''))} <span class="status ${statusClass}" id="status">${e(status)}</span></h1>
<p class="meta">cluster <b>${e(r.cluster)}</b> · run <b>${e(r.run)}</b> · journal <code>${e(r.journal)}</code></p>
${ladder}
<h2>Interruptions and resumes</h2>
<table id="interruptions"><thead><tr>${r.ladder ? '<th>hop</th>' : ''}<th>stopped</th><th>how</th><th>detail</th><th>resumed</th><th>gap</th></tr></thead><tbody>
${interruptions}
</tbody></table>
<h2>Restore points</h2>
<table id="restore-points"><thead><tr><th>hop</th><th>revision</th><th>keys</th><th>file</th><th>restore command</th></tr></thead><tbody>
${rps}
</tbody></table>
<h2>Backups made</h2>
${backups}
${earlier}
${r.ladder ? `<h2 class="hop-title">Hop ${e(r.hop)}</h2>` : ''}
${main}
</body></html>
`;
}

const HOW: Record<string, string> = {
  killed: 'killed (no word from the process)',
  interrupted: 'interrupted (signal)',
  halted: 'halted',
  'no end recorded': 'no end recorded',
};

/** One journal's sections: status line, plan, checks, timeline, cluster version, health, snapshots, roll-back, steps. `idp` prefixes the ids (nested hops). */
function hopSections(r: UpgradeReportDoc, idp: string): string {
  const t0 = Date.parse(r.span.from);
  const total = Math.max(1, Date.parse(r.span.to) - t0);
  const pct = (iso: string) => Math.min(100, Math.max(0, ((Date.parse(iso) - t0) / total) * 100));
  const rel = (iso?: string) => (iso ? `+${secs(Date.parse(iso) - t0)}` : '');
  const clock = (iso?: string) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');
  const when = (iso?: string) => (iso ? `<time datetime="${e(iso)}" title="${e(clock(iso))}">${e(rel(iso))}</time>` : '');
  const statusClass = r.status === 'done' ? 'ok' : r.status === 'halted' || r.status === 'interrupted' ? 'bad' : 'warn';

  const planRows = r.plan
    .map(
      (p) =>
        `<tr data-member="${e(p.name)}"><td>${p.order}</td><td><b>${e(p.name)}</b>${p.wasLeader ? ' <span class="tag">leader</span>' : ''}</td><td><code>${e(p.id)}</code></td><td>${e(p.endpoint)}</td><td>${e(p.fromVersion)} → ${e(r.target)}</td><td>${e(p.action)}</td><td>${e(p.reason)}</td></tr>`,
    )
    .join('\n');

  const ticks = [0, 25, 50, 75, 100].map((p) => `<span class="tick" style="left:${p}%">${e(secs((total * p) / 100))}</span>`).join('');
  const cvAt = r.clusterVersion.at
    ? `<div class="cv" style="left:${pct(r.clusterVersion.at).toFixed(2)}%" title="cluster version ${e(r.clusterVersion.to)} at ${e(clock(r.clusterVersion.at))}"></div>`
    : '';
  // The stretches no run was working (between an interruption and its resume), drawn on every lane.
  const gaps = r.interruptions
    .filter((i) => !i.hop || i.hop === r.hop)
    .map((i) => {
      const left = pct(i.stoppedAt);
      const right = i.resumedAt ? pct(i.resumedAt) : 100;
      return `<div class="gap" style="left:${left.toFixed(2)}%;width:${Math.max(0.3, right - left).toFixed(2)}%" title="${e(`${i.how} at ${clock(i.stoppedAt)}${i.resumedAt ? `, resumed at ${clock(i.resumedAt)}` : ', not resumed'}`)}"></div>`;
    })
    .join('');
  const lanes = r.members
    .map((m) => {
      let bar = '<span class="none">not stopped</span>';
      if (m.downs.length) {
        bar = m.downs
          .map((d, k) => {
            const left = pct(d.from);
            const right = d.to ? pct(d.to) : 100;
            const open = !d.to;
            const rolled = d.back && d.back.by !== 'upgrade';
            const label = open ? 'down: not back (yet)' : `down ${secs(d.ms ?? 0)}${rolled ? `, back on ${d.back!.on} (${d.back!.by})` : ''}`;
            const cls = open ? ' open' : rolled ? ' back' : '';
            const title = `${m.name}: ${clock(d.from)} → ${d.to ? `${clock(d.to)}${d.back ? ` on ${d.back.on} (${d.back.by})` : ''}` : 'not healthy again'}`;
            // (one label per lane: the last window's, the one that stands)
            const lab = k === m.downs.length - 1 ? `<span class="blabel" style="left:${Math.min(left, 60).toFixed(2)}%">${e(label)}</span>` : '';
            return `<div class="bar${cls}" style="left:${left.toFixed(2)}%;width:${Math.max(0.6, right - left).toFixed(2)}%" title="${e(title)}"></div>${lab}`;
          })
          .join('');
      }
      return `<div class="lane" data-member="${e(m.name)}"><div class="lname">${e(m.name)}</div><div class="track">${gaps}${bar}${cvAt}</div></div>`;
    })
    .join('\n');

  const checkRows = r.checks
    .map(
      (c) =>
        `<tr data-rule="${e(c.rule)}" data-status="${e(c.status)}"><td class="nw">${e(c.rule)}</td><td>${e(c.member ?? 'cluster')}</td><td><span class="pill ${e(c.status.replace(/ /g, '-'))}">${e(c.status)}</span></td><td>${c.status === 'not checked' ? `not checked: ${e(c.detail)}` : e(c.detail)}${c.fix ? `; fix: ${e(c.fix)}` : ''}</td><td>${e(c.guide)}</td></tr>`,
    )
    .join('\n');

  const stepRows = r.members
    .flatMap((m) =>
      m.steps.map(
        (s) =>
          `<tr class="st-${e(s.status)}" data-step="${e(`${m.name}/${s.kind}`)}"><td>${e(m.name)}</td><td class="nw">${e(s.kind)}</td><td><span class="pill ${e(s.status)}">${e(s.status)}</span></td><td class="nw">${when(s.startedAt)}</td><td class="num nw">${s.ms === undefined ? '' : e(secs(s.ms))}</td><td>${e(s.error ?? s.detail ?? '')}</td></tr>`,
      ),
    )
    .join('\n');

  const healthRows = r.health
    .map(
      (h) =>
        `<tr><td>${e(h.member ?? 'cluster')}</td><td class="nw">${e(h.step)}</td><td><span class="pill ${e(h.status)}">${e(h.status)}</span></td><td class="nw">${when(h.at)}</td><td>${e(h.detail ?? '')}</td></tr>`,
    )
    .join('\n');

  const snapRows = r.snapshots.length
    ? r.snapshots
        .map(
          (s) =>
            `<tr><td>${e(s.member)}</td><td class="num">${e(s.revision)}</td><td class="num">${e(s.bytes.toLocaleString('en-US'))}</td><td><code class="hash">${s.sha256 ? e(s.sha256) : '<i>file gone</i>'}</code></td><td class="nw">${when(s.at)}</td><td><code>${e(s.file)}</code>${s.removed ? ` <span class="muted">removed ${when(s.removed)}: the restore point is kept</span>` : ''}</td></tr>`,
        )
        .join('\n')
    : '<tr><td colspan="6" class="muted">no snapshot was taken</td></tr>';

  const cv = r.clusterVersion;
  const halt = r.halt
    ? `<section class="halt"><h2>Halted</h2><p>at <code>${e(r.halt.step)}</code>: ${e(r.halt.reason)}</p><p>Roll back with <code>${e(r.halt.rollback)}</code>, or fix the cause and run the same upgrade again to resume.</p></section>`
    : '';

  const rollback = r.rollback?.length
    ? `<h2>Roll-back</h2>
<table id="rollback"><thead><tr><th>member</th><th>back on</th><th>at</th><th>took</th></tr></thead><tbody>
${r.rollback.map((b) => `<tr><td>${e(b.member)}</td><td>${e(b.to)}</td><td class="nw">${when(b.at)}</td><td class="num nw">${e(secs(b.ms))}</td></tr>`).join('\n')}
</tbody></table>`
    : '';

  return `<p class="meta">${e(r.source)} → ${e(r.target)}: <span class="pill ${statusClass}" id="${idp}hop-status">${e(r.status)}</span> · run <b>${e(r.run)}</b> · started ${e(clock(r.startedAt))} · last record ${e(clock(r.updatedAt))} (${e(secs(total))} in all) · journal <code>${e(r.journal)}</code></p>
${halt}
<h2>Plan</h2>
<table id="${idp}plan"><thead><tr><th>#</th><th>member</th><th>id</th><th>client URL</th><th>version</th><th>action</th><th>why</th></tr></thead><tbody>
${planRows}
</tbody></table>
<h2>Checks of the hop (rulebook)</h2>
<table id="${idp}checks"><thead><tr><th>rule</th><th>member</th><th>result</th><th>detail</th><th>guide</th></tr></thead><tbody>
${checkRows || '<tr><td colspan="5" class="muted">none recorded for this hop (a patch hop, or a journal of an older opsctl)</td></tr>'}
</tbody></table>
${
  r.clients?.changes.length
    ? `<h2>Clients: test in staging first</h2>
<p>${e(r.clients.advice)}.</p>
<ul id="${idp}clients">${r.clients.changes.map((c) => `<li><b>${e(c.version)}</b>: ${e(c.change)}</li>`).join('')}</ul>`
    : ''
}
<h2>Timeline: each member's down window</h2>
<div class="timeline" id="${idp}timeline">
${lanes}
<div class="axis">${ticks}</div>
</div>
<p class="legend">from the stop until healthy and caught up on ${e(r.target)}:<i style="background:#cf222e"></i>down<i style="background:#0969da;width:2px"></i>cluster version reached ${e(r.target)} · seconds since the start</p>
<h2>Cluster version</h2>
<p id="${idp}cluster-version"><b>${e(cv.from)} → ${e(cv.to)}</b>: <span class="pill ${e(cv.status)}">${e(cv.status)}</span> ${cv.at ? `at ${when(cv.at)} (${e(clock(cv.at))})` : ''} ${e(cv.detail ?? '')}</p>
<h2>Health checks</h2>
<table id="${idp}health"><thead><tr><th>member</th><th>check</th><th>result</th><th>at</th><th>detail</th></tr></thead><tbody>
${healthRows || '<tr><td colspan="5" class="muted">none ran</td></tr>'}
</tbody></table>
<h2>Snapshots (taken and verified before each stop)</h2>
<table id="${idp}snapshots"><thead><tr><th>before</th><th>revision</th><th>bytes</th><th>SHA-256</th><th>at</th><th>file</th></tr></thead><tbody>
${snapRows}
</tbody></table>
${rollback}
<h2>Every step</h2>
<table id="${idp}steps"><thead><tr><th>member</th><th>step</th><th>status</th><th>started</th><th>took</th><th>detail</th></tr></thead><tbody>
${stepRows}
</tbody></table>
`;
}

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d2330}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:2rem 0 .5rem;border-bottom:1px solid #e3e6ea;padding-bottom:.2rem}
.status{display:inline-block;padding:.1rem .6rem;border-radius:1rem;font-weight:600;color:#fff}.ok{background:#1a7f37}.bad{background:#c62828}.warn{background:#b26a00}
.meta{color:#57606a}.meta b{color:#1d2330}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eef0f2;vertical-align:top}
th{font-weight:600;color:#57606a;font-size:.85rem}td.num{text-align:right;font-variant-numeric:tabular-nums}code{font:12px ui-monospace,monospace;background:#f4f5f7;padding:0 .25em;border-radius:3px}
.hash{word-break:break-all}.tag{font-size:.75rem;background:#ddf4ff;color:#0550ae;border-radius:.5rem;padding:0 .4rem}.muted,.none{color:#8b949e}
.pill{font-size:.8rem;border-radius:.5rem;padding:0 .45rem;background:#eef0f2}.pill.done{background:#dafbe1;color:#1a7f37}.pill.failed{background:#ffebe9;color:#c62828}.pill.running{background:#fff8c5;color:#7d4e00}.pill.skipped{color:#57606a}
.timeline{border:1px solid #e3e6ea;border-radius:6px;padding:.6rem .8rem 1.6rem}.lane{display:flex;align-items:center;height:2rem}.lname{width:8rem;font-weight:600}
.track{position:relative;flex:1;height:1.3rem;background:repeating-linear-gradient(90deg,#f6f8fa 0 24.9%,#e3e6ea 24.9% 25%)}.bar{position:absolute;top:0;bottom:0;background:#cf222e;border-radius:3px}.bar.open{background:repeating-linear-gradient(45deg,#cf222e 0 6px,#ff8182 6px 12px)}
.blabel{position:absolute;top:-1.05rem;font-size:.75rem;color:#a40e26;white-space:nowrap}.none{position:absolute;left:.3rem;font-size:.8rem}
.cv{position:absolute;top:-.3rem;bottom:-.3rem;width:2px;background:#0969da}.axis{position:relative;margin-left:8rem;height:1rem}.tick{position:absolute;transform:translateX(-50%);font-size:.75rem;color:#57606a;white-space:nowrap}.tick:first-child{transform:none}.tick:last-child{transform:translateX(-100%)}
.legend{font-size:.8rem;color:#57606a;margin:.4rem 0 0 8rem}.legend i{display:inline-block;width:.9rem;height:.6rem;vertical-align:middle;margin:0 .3rem 0 .8rem}
.halt{border:1px solid #ffcecb;background:#fff5f5;border-radius:6px;padding:.2rem 1rem}.halt h2{border:0;color:#c62828}
tr.st-failed td{background:#fff5f5}td.nw{white-space:nowrap}
.cmd{word-break:break-all}details.hop{border:1px solid #e3e6ea;border-radius:6px;padding:.4rem .8rem;margin:1rem 0}.pill.ok{background:#dafbe1;color:#1a7f37}.pill.bad{background:#ffebe9;color:#c62828}.pill.warn,.pill.refuse{background:#fff8c5;color:#7d4e00}.pill.not-checked{background:#eef0f2;color:#57606a;font-style:italic}.bar.back{background:#8250df}.gap{position:absolute;top:-.3rem;bottom:-.3rem;background:repeating-linear-gradient(135deg,#d0d7de 0 4px,transparent 4px 8px);opacity:.8}
`;

function secs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : ms < 600_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

// One submission: state and jobs, per suite the verdict table (with
// per-patch columns for a series) and charts of every workload, lock and
// metric against threads/users, the lockups with their stacks, the text
// reports in every format, the reply mail and links to the raw JSON.
// Followed by polling while it runs.
import { getJSON, getText } from '../api.js';
import {
  el, clear, errorBox, verdictBadge, stateBadge, progress, when, poll, num, pct, pval,
  otherParams,
} from '../util.js';
import { lineChart, COLORS } from '../charts.js';

const FORMATS = [
  ['text', 'text'],
  ['aim7', 'AIM7'],
  ['perf', 'perf bench'],
  ['lkp', 'LKP'],
];
const POLL_MS = 3000;

/* run_params_key of docs/result-schema.md: name=value sorted by name */
function paramsKey(params) {
  return Object.keys(params || {}).sort().map((k) => `${k}=${params[k]}`).join(',');
}

function meanSd(xs) {
  const n = xs.length;
  if (!n) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { n, mean, stddev: sd };
}

/* A job's variants -> the commit of a pulled range each was ("0123456789ab subject"), from the documents' `commit` */
const commitLabels = new WeakMap();

/* Aggregate the stored documents: job -> variant -> "workload|lock|params|metric" -> {n, mean, stddev} */
function aggregate(results) {
  const acc = new Map();
  const machines = new Map();
  const labels = new Map();
  for (const r of results) {
    const doc = r.document || {};
    if (!machines.has(r.job) && doc.machine) machines.set(r.job, doc.machine);
    if (doc.commit && typeof doc.commit.label === 'string') {
      if (!labels.has(r.job)) labels.set(r.job, new Map());
      labels.get(r.job).set(r.variant, doc.commit.label);
    }
    for (const run of doc.runs || []) {
      if (run.lockup) continue;
      const pk = paramsKey(run.params);
      for (const [metric, value] of Object.entries(run.metrics || {})) {
        const key = `${run.workload}|${run.lock}|${pk}|${metric}`;
        const s = (run.samples && run.samples[metric]) || [value];
        if (!acc.has(r.job)) acc.set(r.job, new Map());
        const byVar = acc.get(r.job);
        if (!byVar.has(r.variant)) byVar.set(r.variant, new Map());
        const m = byVar.get(r.variant);
        if (!m.has(key)) m.set(key, []);
        m.get(key).push(...s);
      }
    }
  }
  const out = new Map();
  for (const [job, byVar] of acc) {
    const vmap = new Map();
    for (const [variant, m] of byVar) {
      const stats = new Map();
      for (const [k, xs] of m) stats.set(k, meanSd(xs));
      vmap.set(variant, stats);
    }
    out.set(job, vmap);
    if (labels.has(job)) commitLabels.set(vmap, labels.get(job));
  }
  return { stats: out, machines };
}

function patchVariants(jobStats) {
  if (!jobStats) return [];
  return [...jobStats.keys()].filter((v) => /^patch-\d+$/.test(v))
    .sort((a, b) => Number(a.slice(6)) - Number(b.slice(6)));
}

/* " (0123456789ab subject)" when the variant was a commit of a pulled range, else "" */
function patchLabel(jobStats, variant) {
  const l = jobStats && commitLabels.get(jobStats);
  return l && l.has(variant) ? ` (${l.get(variant)})` : '';
}

function meanCell(s, cls) {
  if (!s || !s.n) return el('td', { class: `num ${cls || ''}` }, '-');
  return el('td', { class: `num ${cls || ''}` },
    num(s.mean), el('span', { class: 'sd' }, ` ± ${num(s.stddev)}`), el('span', { class: 'n' }, ` (${s.n})`));
}

/*
 * A row this machine cannot resolve (the job's plan or its own rounds said
 * so): said beside its verdict as the text report says it, never shown as
 * no-change; one whose change lies past its margin kept the job looking:
 * the flag the comparison stored (`moved`, lib/compare.h
 * compare_row_moved), not worked out again here.
 */
function unresolvedNote(v) {
  if (v.verdict !== 'inconclusive' || !(v.unresolvable > 0)) return null;
  const moved = v.moved === true;
  return el('span', { class: 'unresolvable', title: 'the narrowest margin inside which this row\'s noise would let the job\'s most rounds show it unchanged' },
    ` not resolvable on this machine: ${(v.unresolvable * 100).toFixed(1)}%${moved ? '; moved past its margin' : ''}`);
}

/*
 * The parameters every row shares, as [name, value] pairs in name order:
 * said once in the table's caption, left out of each row's cell.
 */
function sharedParams(rows) {
  const split = rows.map((v) => new Map((v.params || '').split(',').filter(Boolean).map((x) => {
    const i = x.indexOf('=');
    return i < 0 ? [x, ''] : [x.slice(0, i), x.slice(i + 1)];
  })));
  if (split.length === 0) return [];
  return [...split[0]].filter(([k, val]) => split.every((m) => m.get(k) === val));
}

/* One table per workload: its shared parameters are said once, in its caption. */
function verdictTables(rows, patches, jobStats) {
  const byWorkload = new Map();
  for (const v of rows) {
    if (!byWorkload.has(v.workload)) byWorkload.set(v.workload, []);
    byWorkload.get(v.workload).push(v);
  }
  return [...byWorkload].map(([workload, wrows]) => {
    const shared = sharedParams(wrows);
    const caption = el('caption', { class: 'params-common' }, el('strong', {}, workload),
      shared.length ? `: every row at ${shared.map(([k, val]) => `${k}=${val}`).join(', ')}` : '');
    return el('div', { class: 'table-wrap' }, verdictTable(wrows, patches, jobStats, new Set(shared.map(([k]) => k)), caption));
  });
}

function verdictTable(rows, patches, jobStats, shared, caption) {
  // the workload is the table's (its caption says it)
  const head = ['lock', 'params', 'metric', 'base mean ± sd (n)',
    ...patches.map((p) => `${p}${patchLabel(jobStats, p)} mean (change)`), 'patched mean ± sd (n)', 'change [95% interval]', 'margin', 'p', 'q', 'verdict'];
  const last = 4 + patches.length;
  const numeric = new Set([3, ...patches.map((_, i) => 4 + i), last, last + 1, last + 2, last + 3, last + 4]);
  const own = (params) => (params || '').split(',').filter((x) => x && !shared.has(x.split('=')[0]));
  return el('table', { class: 'verdicts' }, caption,
    el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: numeric.has(i) ? 'num' : null }, h)))),
    el('tbody', {}, rows.map((v) => {
      const key = `${v.workload}|${v.lock}|${v.params}|${v.metric}`;
      const sig = v.significant || v.verdict === 'regression' || v.verdict === 'improvement';
      return el('tr', { class: `v-${v.verdict}${sig ? ' sig' : ''}${v.control ? ' control' : ''}`, dataset: { key } },
        el('td', {}, v.lock, v.control ? el('abbr', { class: 'control', title: 'untouched by the change: this row is the machine\'s own A/A variation and decides nothing but a lockup' }, ' (control)') : null),
        el('td', { class: 'params' }, own(v.params).length ? own(v.params).flatMap((x, i) => (i ? [',', el('wbr'), x] : [x])) : '-'),
        el('td', { class: 'metric' }, v.metric, v.unit ? el('span', { class: 'unit' }, ` (${v.unit})`) : null,
          el('span', { class: 'better', title: `${v.better} is better` }, v.better === 'higher' ? ' ↑' : ' ↓')),
        meanCell(v.base),
        patches.map((p) => {
          const s = jobStats && jobStats.get(p) && jobStats.get(p).get(key);
          if (!s) return el('td', { class: 'num' }, '-');
          const ch = v.base && v.base.mean ? (s.mean - v.base.mean) / v.base.mean : null;
          return el('td', { class: 'num patchk' }, num(s.mean), el('span', { class: 'n' }, ` (${pct(ch)})`));
        }),
        meanCell(v.patched),
        el('td', { class: `num change${sig ? ' sig' : ''}` }, v.metric === 'lockup' ? '-' : pct(v.change),
          sig ? el('abbr', { class: 'star', title: 'significant after Benjamini-Hochberg and over the minimum effect' }, ' *') : null,
          v.metric !== 'lockup' && v.change_lo < v.change_hi ? el('span', { class: 'ci' }, ` [${pct(v.change_lo)}, ${pct(v.change_hi)}]`) : null),
        el('td', { class: 'num margin' }, v.metric !== 'lockup' && v.margin > 0 ? `±${(v.margin * 100).toFixed(1)}%` : '-'),
        el('td', { class: 'num' }, v.metric === 'lockup' ? '-' : pval(v.p)),
        el('td', { class: 'num' }, v.metric === 'lockup' ? '-' : pval(v.q)),
        el('td', { class: 'verdict' }, verdictBadge(v.verdict), unresolvedNote(v)));
    })));
}

/* One chart per workload + lock + metric (+ other params), x = users/threads. */
function chartGroups(rows) {
  const groups = new Map();
  for (const v of rows) {
    if (v.metric === 'lockup' || v.users < 0) continue;
    if (!(v.base && v.base.n) && !(v.patched && v.patched.n)) continue;
    const other = otherParams(v.params);
    const g = `${v.workload}|${v.lock}|${v.metric}|${other}`;
    if (!groups.has(g)) groups.set(g, { workload: v.workload, lock: v.lock, metric: v.metric, unit: v.unit, other, xLabel: /(^|,)users=/.test(v.params) ? 'users' : 'threads', rows: [] });
    groups.get(g).rows.push(v);
  }
  return [...groups.values()];
}

async function drawCharts(box, rows, patches, jobStats) {
  const groups = chartGroups(rows);
  if (!groups.length) {
    box.append(el('p', { class: 'muted' }, 'Nothing to chart yet.'));
    return;
  }
  // what every row of a workload shares is said by its table's caption, not in each title
  const shared = new Map();
  for (const w of new Set(rows.map((v) => v.workload))) {
    shared.set(w, new Set(sharedParams(rows.filter((v) => v.workload === w)).map(([k, val]) => `${k}=${val}`)));
  }
  box.append(el('p', { class: 'legend muted charts-note' }, `Each chart: a metric against ${groups[0].xLabel}, mean ± stddev of the samples; ↑/↓ = higher/lower is better.`));
  for (const g of groups) {
    g.rows.sort((a, b) => a.users - b.users);
    const xs = g.rows.map((v) => v.users);
    const series = [{ label: 'base', y: g.rows.map((v) => (v.base.n ? v.base.mean : null)), sd: g.rows.map((v) => v.base.stddev), color: COLORS[0] }];
    patches.forEach((p, i) => {
      const m = jobStats.get(p);
      const ss = g.rows.map((v) => m.get(`${v.workload}|${v.lock}|${v.params}|${v.metric}`));
      if (ss.some(Boolean)) {
        series.push({ label: p, y: ss.map((s) => (s ? s.mean : null)), sd: ss.map((s) => (s ? s.stddev : null)), dash: true, color: COLORS[2 + (i % (COLORS.length - 2))] });
      }
    });
    series.push({ label: 'patched', y: g.rows.map((v) => (v.patched.n ? v.patched.mean : null)), sd: g.rows.map((v) => v.patched.stddev), color: COLORS[1] });
    const other = (g.other || '').split(',').filter((x) => x && !shared.get(g.workload).has(x)).join(',');
    const title = `${g.workload} · ${g.lock} · ${g.metric} ${g.rows[0].better === 'higher' ? '↑' : '↓'}${other ? ` (${other})` : ''}`;
    const fig = el('figure', { class: 'chart', dataset: { workload: g.workload, lock: g.lock, metric: g.metric } });
    const plot = el('div', { class: 'plot' });
    fig.append(plot);
    box.append(fig);
    if (xs.length === 1) fig.classList.add('one');
    await lineChart(plot, { title, xLabel: g.xLabel, yLabel: g.unit || g.metric, x: xs, series, height: 160 });
  }
}

/*
 * The charts under a summary that says how many there are: open when a few
 * lines are drawn (at most CHARTS_OPEN), else closed so that the page stays
 * about two screens tall, drawn when first opened.
 */
const CHARTS_OPEN = 4;
function chartsBox(charts, rows, patches, jobStats) {
  const groups = chartGroups(rows);
  const lines = groups.filter((g) => new Set(g.rows.map((v) => v.users)).size > 1).length;
  const box = el('details', { class: 'charts-box', open: lines <= CHARTS_OPEN },
    el('summary', {}, `Charts: ${groups.length} (each metric against ${groups.length ? groups[0].xLabel : 'threads'})`), charts);
  let drawn = box.open;
  box.addEventListener('toggle', () => {
    if (!box.open || drawn) return;
    drawn = true;
    drawCharts(charts, rows, patches, jobStats);
  });
  return box;
}

function lockupList(lockups) {
  const groups = new Map();
  for (const l of lockups) {
    const k = [l.job, l.variant, l.workload, l.lock, l.params, l.kind, l.message].join('|');
    if (!groups.has(k)) groups.set(k, { ...l, rounds: [] });
    groups.get(k).rounds.push(l.round);
  }
  return el('div', { class: 'lockups' }, [...groups.values()].map((g, i) => el('details', { class: 'lockup', open: i < 3 },
    el('summary', {}, el('span', { class: 'badge v-lockup' }, g.kind), ' ',
      `${g.variant} build, ${g.workload} with ${g.lock} at ${g.params}: `, el('q', {}, g.message),
      el('span', { class: 'muted' }, ` (job #${g.job}, round${g.rounds.length > 1 ? 's' : ''} ${g.rounds.join(', ')})`)),
    g.stacks ? el('pre', { class: 'stacks' }, g.stacks) : el('p', { class: 'muted' }, 'No stacks or console lines were captured.'))));
}

export function render(main, params, match) {
  const id = Number(match[1]);
  document.title = `locklab: submission #${id}`;
  const api = `/api/v1/submissions/${id}`;
  const errors = el('div');
  const head = el('div', { class: 'sub-head' });
  const jobsBox = el('div', { class: 'table-wrap' });
  const compBox = el('div', { id: 'comparisons' });
  const lockBox = el('section', { id: 'lockups', hidden: true });
  const patchBox = el('div');
  const reportPre = el('pre', { class: 'report', id: 'report', tabindex: '0', 'aria-live': 'polite' });
  const reportErr = el('div');
  const replyPre = el('pre', { class: 'report', id: 'reply', tabindex: '0', hidden: true });
  const replyErr = el('div');
  const mailBox = el('div', { id: 'mails', class: 'table-wrap' });
  const versionBox = el('section', { id: 'versions', hidden: true });
  const trailerBox = el('section', { id: 'trailers', hidden: true });
  let format = FORMATS.some(([f]) => f === params.get('format')) ? params.get('format') : 'text';
  let lastSig = null;
  let lastState = null;

  const tabs = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Report format' },
    FORMATS.map(([f, label]) => el('button', { type: 'button', role: 'tab', id: `tab-${f}`, 'aria-controls': 'report', 'aria-selected': String(f === format), dataset: { format: f }, onclick: () => { format = f; loadReport(); } }, label)));
  tabs.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const i = FORMATS.findIndex(([f]) => f === format);
    format = FORMATS[(i + (e.key === 'ArrowRight' ? 1 : FORMATS.length - 1)) % FORMATS.length][0];
    loadReport();
    tabs.querySelector(`#tab-${format}`).focus();
  });

  async function loadReport() {
    for (const b of tabs.querySelectorAll('button')) b.setAttribute('aria-selected', String(b.dataset.format === format));
    reportPre.setAttribute('aria-labelledby', `tab-${format}`);
    reportPre.dataset.format = format;
    try {
      const text = await getText(`${api}/report?format=${format}`);
      reportPre.dataset.loaded = format;
      reportPre.textContent = text || '(no comparison stored yet)';
      clear(reportErr);
    } catch (err) {
      clear(reportErr, errorBox(err, `The ${format} report could not be loaded`));
    }
  }

  const replyButton = el('button', { type: 'button', id: 'show-reply', onclick: async () => {
    replyButton.disabled = true;
    try {
      replyPre.textContent = await getText(`${api}/reply`);
      replyPre.hidden = false;
      clear(replyErr);
    } catch (err) {
      replyPre.hidden = true;
      clear(replyErr, errorBox(err, 'The reply mail is not available'));
    } finally {
      replyButton.disabled = false;
    }
  } }, 'Show the reply mail');

  const raw = el('ul', { class: 'raw' },
    el('li', {}, el('a', { href: api }, 'submission JSON')),
    el('li', {}, el('a', { href: `${api}/results` }, 'result documents JSON (lockbench-result/1)')),
    FORMATS.map(([f, l]) => el('li', {}, el('a', { href: `${api}/report?format=${f}` }, `${l} report (text/plain)`))),
    el('li', {}, el('a', { href: `${api}/reply` }, 'reply mail (message/rfc822)')));

  main.append(errors, head,
    el('section', { id: 'jobs' }, el('h2', {}, 'Jobs'), jobsBox),
    el('section', {}, el('h2', {}, 'Comparison'), compBox),
    lockBox,
    versionBox,
    trailerBox,
    el('section', { id: 'reports' }, el('h2', {}, 'Reports as mailed'), tabs, reportErr, reportPre),
    el('section', { id: 'reply-mail' }, el('h2', {}, 'Reply mail'),
      el('p', {}, replyButton, ' ', el('span', { class: 'muted' }, 'as it is kept in the outbox and sent to the list')), replyErr, replyPre,
      mailBox),
    el('section', { id: 'patches' }, el('h2', {}, 'Patches'), patchBox),
    el('section', {}, el('h2', {}, 'Raw data'), raw));

  function drawHead(s) {
    const suites = (s.suites || []).join(', ');
    clear(head,
      el('p', { class: 'crumbs' }, el('a', { href: '#/submissions' }, 'Submissions'), ` / #${s.id}`),
      el('h1', {}, s.subject || `Submission #${s.id}`),
      el('p', { class: 'facts' }, stateBadge(s.state), ' ', verdictBadge(s.verdict), ' ',
        el('span', { id: 'sub-verdict', dataset: { verdict: s.verdict || '', state: s.state } }, s.state === 'done' ? `verdict: ${s.verdict}` : s.state),
        ` · source ${s.source}`, s.url ? [' ', el('code', {}, s.url)] : null,
        s.git ? [' ', el('code', {}, `${s.git.url} ${s.git.ref}${s.git.base ? ` (base ${s.git.base})` : ''}`)] : null,
        ` · suites ${suites}`, s.tree ? ` · tree ${s.tree.name} (${s.tree.branch})` : '',
        s.version > 1 ? ` · v${s.version}` : '',
        s.previous_id ? [' (previous version: ', el('a', { href: `#/submissions/${s.previous_id}`, id: 'sub-previous' }, `#${s.previous_id}`), ')'] : null,
        ` · created ${when(s.created)} · updated ${when(s.updated)}`),
      s.reason ? el('div', { class: 'error', role: 'alert' }, el('strong', {}, 'Failed: '), s.reason) : null);
  }

  function drawJobs(s) {
    clear(jobsBox, el('table', { class: 'jobs' },
      el('thead', {}, el('tr', {}, ['job', 'suite', 'machine class', 'state', 'rounds', 'attempts', 'agent', 'verdict', 'reason']
        .map((h, i) => el('th', { scope: 'col', class: i === 0 || i === 5 ? 'num' : null }, h)))),
      el('tbody', {}, (s.jobs || []).map((j) => el('tr', {},
        el('td', { class: 'num' }, `#${j.id}`), el('td', {}, j.suite), el('td', {}, j.machine_class),
        // what its agent last said it does ("building kernel base ...: 812 objects compiled, 4 min 10 s")
        el('td', {}, stateBadge(j.state), j.activity ? el('div', { class: 'activity muted', title: when(j.activity_at) }, j.activity) : null),
        el('td', {}, progress(j.rounds_complete, j.rounds)),
        el('td', { class: 'num' }, j.attempts),
        el('td', {}, j.claimed_by ? el('a', { href: '#/machines' }, `agent #${j.claimed_by}`) : '-'),
        el('td', {}, verdictBadge(j.verdict)), el('td', { class: 'reason' }, j.reason || ''))))));
  }

  // the outbox rows of this submission and where each one is in its delivery
  function drawMails(s) {
    const ms = s.mails || [];
    clear(mailBox, ms.length === 0 ? el('p', { class: 'muted' }, s.state === 'done' || s.state === 'failed' ? 'No mail: nobody to send it to.' : 'The reply is written when the submission is finished.')
      : el('table', { class: 'jobs' },
        el('thead', {}, el('tr', {}, ['mail', 'delivery', 'to', 'Message-ID', 'attempts', 'sent', 'last error']
          .map((h, i) => el('th', { scope: 'col', class: i === 0 || i === 4 ? 'num' : null }, h)))),
        el('tbody', {}, ms.map((m) => el('tr', { dataset: { state: m.state } },
          el('td', { class: 'num' }, `#${m.id}`), el('td', {}, stateBadge(m.state)),
          el('td', {}, m.recipients || '-'), el('td', {}, el('code', {}, m.message_id || '-')),
          el('td', { class: 'num' }, m.attempts), el('td', {}, m.sent ? when(m.sent) : '-'),
          el('td', { class: 'reason' }, m.last_error || ''))))));
  }

  // The versions of the series side by side, oldest on the left: a column per
  // version, a row per patch.  The submission embeds the newest 20 (newest
  // first), its own version when that is older (marked current) and their
  // total.  Older ones are loaded 20 at a time from .../versions, before the
  // oldest of the run that reaches down from the newest, and kept across the
  // page's refreshes; when a refresh moved the embedded window up past them
  // (newer versions came), the versions that fell between are fetched once.
  const newestFirst = (a, b) => b.version - a.version || b.id - a.id;
  const versionErr = el('div', { id: 'versions-error' });
  let older = []; // loaded from .../versions, newest first, one run without a gap
  let olderTop = null; // the version they were loaded before: the run goes on above it
  let exhausted = false; // a page came back with next_before null: none older is left
  let loading = false;
  let filling = false;
  let lastVersions = null;
  // the embedded newest versions; the page's own one is left out (it may stand apart)
  const embeddedRun = (s) => (s.versions || []).filter((v) => !v.current);
  const runOldest = () => (older.length ? older[older.length - 1] : embeddedRun(lastVersions).at(-1));

  function keepOlder(page) {
    const ids = new Set(older.map((v) => v.id));
    older = older.concat((page.versions || []).filter((v) => !ids.has(v.id))).sort(newestFirst);
    if (page.next_before === null) exhausted = true;
  }

  async function loadOlderVersions() {
    const before = runOldest();
    loading = true;
    drawVersions(lastVersions);
    try {
      const page = await getJSON(`${api}/versions?limit=20&before=${encodeURIComponent(before.id)}`);
      if (!older.length) olderTop = before;
      keepOlder(page);
      clear(versionErr);
    } catch (err) {
      clear(versionErr, errorBox(err, 'The older versions could not be loaded'));
    } finally {
      loading = false;
      drawVersions(lastVersions);
    }
  }

  // the window moved up past the loaded versions: fetch the ones in between
  async function fillVersionGap() {
    const run = lastVersions ? embeddedRun(lastVersions) : [];
    if (filling || !older.length || !run.length || run.some((v) => v.id === olderTop.id)) return;
    filling = true;
    const top = run[run.length - 1];
    let before = top;
    try {
      for (;;) {
        const limit = Math.min(100, Math.max(1, before.version - olderTop.version));
        const page = await getJSON(`${api}/versions?limit=${limit}&before=${encodeURIComponent(before.id)}`);
        const got = page.versions || [];
        const reached = got.some((v) => v.id === olderTop.id || older.some((o) => o.id === v.id));
        keepOlder(page);
        if (reached || page.next_before === null || !got.length) break;
        before = got[got.length - 1];
      }
      olderTop = top;
      clear(versionErr);
    } catch (err) {
      clear(versionErr, errorBox(err, 'The versions between the newest and the older ones could not be loaded'));
      return;
    } finally {
      filling = false;
    }
    drawVersions(lastVersions);
  }

  function drawVersions(s) {
    lastVersions = s;
    const newest = s.versions || [];
    const ids = new Set(newest.map((v) => v.id));
    const shown = newest.concat(older.filter((v) => !ids.has(v.id))).sort(newestFirst);
    const total = Math.max(s.versions_total ?? shown.length, shown.length);
    versionBox.hidden = total < 2;
    if (total < 2) return;
    fillVersionGap();
    const vs = shown.slice().reverse();
    const seqs = [...new Set(vs.flatMap((v) => v.patches.map((p) => p.seq)))].sort((a, b) => a - b);
    const title = (p) => (p ? p.subject.replace(/^(\[[^\]]*\]\s*)+/, '') : null);
    const cell = (v, seq, i) => {
      const p = v.patches.find((x) => x.seq === seq);
      if (!p) return el('td', { class: 'muted', dataset: { version: v.version, seq } }, '-');
      const before = i > 0 ? vs[i - 1].patches.find((x) => x.seq === seq) : null;
      const changed = i > 0 && title(before) !== title(p);
      return el('td', { class: changed ? 'changed' : null, dataset: { version: v.version, seq } },
        el('span', { class: 'title' }, title(p)), changed ? el('span', { class: 'muted' }, ' (new or retitled)') : null,
        p.trailers ? el('span', { class: 'muted' }, ` · ${p.trailers} trailer${p.trailers > 1 ? 's' : ''}`) : null);
    };
    const left = total - shown.length;
    const own = newest.find((v) => v.current);
    const oldest = runOldest();
    const apart = own && oldest && newestFirst(own, oldest) > 0; // older than the run from the newest
    const more = left > 0 ? el('p', { id: 'versions-more' },
      el('span', { id: 'versions-count' }, `${shown.length} of ${total} versions shown: `,
        apart ? `the newest ${shown.length - 1} and this one (v${own.version}).` : 'the newest.'), ' ',
      exhausted ? null : el('button', { type: 'button', id: 'versions-load', disabled: loading, onclick: loadOlderVersions },
        `Load ${Math.min(20, left)} older`),
      ' ', el('a', { href: `${api}/versions?limit=100` }, 'all versions (JSON, paged)')) : null;
    clear(versionBox, el('h2', {}, left > 0 ? `Versions of this series (${shown.length} of ${total})` : `Versions of this series (${total})`),
      more, versionErr,
      el('div', { class: 'table-wrap' }, el('table', { class: 'versions' },
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, ''),
          vs.map((v) => el('th', { scope: 'col', class: v.id === s.id ? 'current' : null, dataset: { version: v.version } },
            v.id === s.id ? `v${v.version} (#${v.id}, this page)` : el('a', { href: `#/submissions/${v.id}` }, `v${v.version} (#${v.id})`))))),
        el('tbody', {},
          el('tr', { class: 'verdict-row' }, el('th', { scope: 'row' }, 'verdict'),
            vs.map((v) => el('td', { dataset: { version: v.version } }, stateBadge(v.state), ' ', verdictBadge(v.verdict)))),
          el('tr', {}, el('th', { scope: 'row' }, 'created'), vs.map((v) => el('td', {}, when(v.created)))),
          seqs.map((seq) => el('tr', { dataset: { seq } }, el('th', { scope: 'row' }, seq === 0 ? 'cover' : `patch ${seq}`),
            vs.map((v, i) => cell(v, seq, i))))))));
  }

  // Reviewed-by, Acked-by and Tested-by lines the list gave in replies to this series' mails
  function drawTrailers(s) {
    const ts = s.trailers || [];
    trailerBox.hidden = ts.length === 0;
    if (!ts.length) return;
    const subject = (seq) => ((s.patches || []).find((p) => p.seq === seq) || {}).subject || `patch ${seq}`;
    clear(trailerBox, el('h2', {}, `Trailers given on the list (${ts.length})`),
      el('div', { class: 'table-wrap' }, el('table', { class: 'jobs' },
        el('thead', {}, el('tr', {}, ['for', 'trailer', 'in the reply of', 'Message-ID', 'received']
          .map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, ts.map((t) => el('tr', { dataset: { seq: t.seq, kind: t.kind } },
          el('td', {}, t.seq === 0 ? ['the whole series (', subject(0), ')'] : subject(t.seq)),
          el('td', {}, el('code', {}, `${t.kind}: ${t.who}`)),
          el('td', {}, t.from || '-'), el('td', {}, el('code', {}, t.reply_id)),
          el('td', {}, when(t.received))))))));
  }

  function drawPatches(s) {
    const ps = s.patches || [];
    clear(patchBox, ps.length === 0 ? el('p', { class: 'muted' }, s.source === 'git' ? 'A git ref: the agent fetches the commits.' : 'No patches stored.')
      : el('ol', { class: 'patches' }, ps.map((p) => el('li', { value: p.seq },
        el('details', {}, el('summary', {}, el('strong', {}, p.subject), ' — ', p.author, p.cover ? ' (cover letter)' : ''),
          el('p', { class: 'muted' }, `Message-ID ${p.message_id || '-'} · ${p.date || ''}`),
          p.body ? el('pre', { class: 'mail' }, p.body) : null,
          p.diff ? el('pre', { class: 'diff' }, p.diff) : null)))),
    setAsideBox(s.set_aside || []));
  }

  // Patch mails the series held that were not tested: a part past the
  // numbering (3/2) or the earlier copy of a part sent again.
  function setAsideBox(aside) {
    if (aside.length === 0) return null;
    const why = (a) => (a.why === 'replaced'
      ? `an earlier copy of part ${a.seq}/${a.total}: the later copy above is tested`
      : `part ${a.seq}/${a.total} is past the series' numbering`);
    return el('div', { id: 'set-aside' },
      el('h3', {}, `Not tested: ${aside.length} mail${aside.length === 1 ? '' : 's'} set aside`),
      el('ul', { class: 'patches' }, aside.map((a) => el('li', {},
        el('details', {}, el('summary', {}, el('strong', {}, a.subject), ' — ', why(a)),
          el('p', { class: 'muted' }, `Message-ID ${a.message_id || '-'} · ${a.author || ''} · ${a.date || ''}`),
          a.diff ? el('pre', { class: 'diff' }, a.diff) : null)))));
  }

  async function drawComparisons(s) {
    const rowsByJob = new Map();
    for (const v of s.verdicts || []) {
      if (!rowsByJob.has(v.job)) rowsByJob.set(v.job, []);
      rowsByJob.get(v.job).push(v);
    }
    clear(compBox);
    if (rowsByJob.size === 0) {
      compBox.append(el('p', { class: 'muted', id: 'no-comparison' },
        s.state === 'failed' ? 'The submission failed before a comparison was made.' : 'No comparison yet: it is made when the first rounds are in. This page follows the jobs.'));
      return;
    }
    let agg = { stats: new Map(), machines: new Map() };
    try {
      agg = aggregate((await getJSON(`${api}/results`)).results || []);
    } catch (err) {
      compBox.append(errorBox(err, 'The result documents could not be loaded (per-patch columns left out)'));
    }
    for (const [job, rows] of rowsByJob) {
      const j = (s.jobs || []).find((x) => x.id === job) || {};
      const m = agg.machines.get(job);
      const jobStats = agg.stats.get(job);
      const patches = patchVariants(jobStats);
      const charts = el('div', { class: 'charts' });
      const fin = rows.every((r) => r.final);
      compBox.append(el('section', { class: 'comparison', dataset: { job } },
        el('h3', {}, `Suite ${rows[0].suite}`, m ? ` on ${m.hostname}` : '', ` (machine class ${j.machine_class || '?'}, job #${job})`),
        el('p', { class: 'muted' }, m ? `${m.cpus} cpus, ${m.model}, kernel ${m.kernel}. ` : '',
          fin ? 'Final comparison.' : (j.state === 'running' && j.confirm_from != null
            ? `Confirming: rounds 0-${j.confirm_from - 1} found a change, and rounds ${j.confirm_from} and later must find it again before it counts.`
            : 'More rounds running: this comparison is not final.'),
          patches.length ? ` Per-patch columns: the first K patches of the series (${patches.join(', ')}); not tested for significance.` : ''),
        j.identical_code
          ? el('p', { class: 'identical' }, `No code changed: base and patched ran one image (${String(j.image || '').slice(0, 19)}…), so every row below is this machine's own A/A and the verdict is no-change.`)
          : null,
        verdictTables(rows, patches, jobStats),
        el('p', { class: 'legend muted' }, '* = significant after Benjamini-Hochberg and over the minimum effect',
          fin && j.confirm_from != null ? `, found on rounds 0-${j.confirm_from - 1} and confirmed on rounds ${j.confirm_from} and later` : '',
          '; only headline rows of the touched locks decide; instructions_per_pair is a code-path note that decides nothing alone; a Tested-by needs every deciding row no-change or improvement; ↑/↓ = higher/lower is better; margin = a row is no-change when two one-sided tests show its change inside ±margin, at the level its looks and rows leave',
          rows.some((r) => r.unresolvable > 0) ? '; not resolvable on this machine: X% = the narrowest margin inside which the row\'s noise would let the job\'s most rounds show it unchanged, past its own, so the row asks for no more rounds, is never no-change and holds back a Tested-by' : ''),
        chartsBox(charts, rows, patches, jobStats)));
      if (charts.parentNode.open) await drawCharts(charts, rows, patches, jobStats);
    }
  }

  async function refresh() {
    let s;
    try {
      s = await getJSON(api);
      clear(errors);
    } catch (err) {
      clear(errors, errorBox(err, `Submission #${id} could not be loaded`));
      return err.status !== 404; // a missing submission will not appear by waiting
    }
    document.title = `locklab: #${s.id} ${s.subject || ''}`;
    drawHead(s);
    drawJobs(s);
    drawMails(s);
    drawVersions(s);
    drawTrailers(s);
    const sig = JSON.stringify([s.state, (s.jobs || []).map((j) => [j.state, j.rounds_complete, j.rounds, j.activity]), (s.verdicts || []).length, (s.verdicts || []).map((v) => v.final).join(), (s.lockups || []).length]);
    if (sig !== lastSig) {
      lastSig = sig;
      if (lastState === null) drawPatches(s);
      if ((s.lockups || []).length) {
        lockBox.hidden = false;
        clear(lockBox, el('h2', {}, `Lockups (${s.lockups.length} runs)`), lockupList(s.lockups));
      }
      await drawComparisons(s);
      loadReport();
    }
    lastState = s.state;
    // a finished submission is still followed while its reply is on its way
    return s.state === 'queued' || s.state === 'running'
      || (s.mails || []).some((m) => m.state === 'queued' || m.state === 'sending');
  }

  return poll(refresh, POLL_MS);
}

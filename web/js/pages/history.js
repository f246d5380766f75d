// History: one metric over time for a tree's branch, per machine.  The
// data model keeps no separate branch runs, so the history is built from the
// final comparisons of done submissions (GET /api/v1/history): each
// submission's base build is the branch as it was then, so its base mean
// is one point of the branch; the patched mean is shown beside it.
import { getJSON } from '../api.js';
import { el, clear, errorBox, num, pct, when, verdictBadge } from '../util.js';
import { lineChart, COLORS } from '../charts.js';

function opt(value, label, selected) {
  return el('option', { value, selected: value === selected }, label);
}

export function render(main, params) {
  document.title = 'locklab: history';
  const errors = el('div');
  const controls = el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() });
  const out = el('div', { id: 'history-out' });
  main.append(el('h1', {}, 'History'),
    el('p', { class: 'lead' }, 'A metric over time for a tree\'s branch, per machine: the base build of every finished submission is the branch as it was when the submission ran.'),
    errors, controls, out);
  let alive = true;

  getJSON('/api/v1/history').then((idx) => {
    if (!alive) return;
    // throughput first: it is what the tables lead with
    const rank = (s) => (/ops_per_sec|jpm|ops/.test(s.metric) ? 0 : 1);
    const series = (idx.series || []).filter((s) => s.metric !== 'lockup')
      .sort((a, b) => rank(a) - rank(b) || b.submissions - a.submissions);
    if (series.length === 0) {
      out.append(el('p', { class: 'empty' }, 'No finished comparison yet: the history fills as submissions are done.'));
      return;
    }
    const keyOf = (s) => `${s.workload}|${s.lock}|${s.metric}`;
    let cur = series.find((s) => keyOf(s) === [params.get('workload'), params.get('lock'), params.get('metric')].join('|')) || series[0];
    let users = params.get('users') || String(cur.users[cur.users.length - 1]);
    let tree = params.get('tree') ?? '*';
    const sSel = el('select', { id: 'h-series' }, series.map((s) => opt(keyOf(s), `${s.workload} · ${s.lock} · ${s.metric}${s.unit ? ` (${s.unit})` : ''} — ${s.submissions} submission${s.submissions === 1 ? '' : 's'}`, keyOf(cur))));
    const uSel = el('select', { id: 'h-users' });
    const tSel = el('select', { id: 'h-tree' }, opt('*', 'every tree', tree),
      (idx.trees || []).map((t) => opt(t.name ?? '', t.name ? `${t.name} (${t.branch})` : 'default native tree', tree)));
    const fillUsers = () => {
      if (!cur.users.map(String).includes(users)) users = String(cur.users[cur.users.length - 1]);
      clear(uSel, cur.users.map((u) => opt(String(u), String(u), users)));
    };
    fillUsers();
    controls.append(
      el('div', {}, el('label', { for: 'h-series' }, 'Workload, lock and metric'), sSel),
      el('div', {}, el('label', { for: 'h-users' }, 'Threads / users'), uSel),
      el('div', {}, el('label', { for: 'h-tree' }, 'Tree'), tSel));

    const load = async () => {
      const q = new URLSearchParams({ workload: cur.workload, lock: cur.lock, metric: cur.metric, users });
      if (tree !== '*') q.set('tree', tree);
      history.replaceState(null, '', `#/history?${q}`);
      clear(out, el('p', { class: 'muted' }, 'Loading…'));
      let d;
      try {
        d = await getJSON(`/api/v1/history?${q}`);
      } catch (err) {
        clear(out, errorBox(err, 'The history could not be loaded'));
        return;
      }
      if (!alive) return;
      draw(d.points || []);
    };

    const draw = async (points) => {
      clear(out);
      if (points.length === 0) {
        out.append(el('p', { class: 'empty' }, 'No finished comparison for this choice.'));
        return;
      }
      const hosts = [...new Set(points.map((p) => p.hostname || '?'))].sort();
      const times = [...new Set(points.map((p) => Math.floor(new Date(p.time).getTime() / 1000)))].sort((a, b) => a - b);
      const at = new Map(times.map((t, i) => [t, i]));
      const chartSeries = [];
      hosts.forEach((h, hi) => {
        const base = { label: `${h} base`, y: times.map(() => null), sd: times.map(() => null), color: COLORS[(2 * hi) % COLORS.length] };
        const pat = { label: `${h} patched`, y: times.map(() => null), sd: times.map(() => null), color: COLORS[(2 * hi + 1) % COLORS.length], points: true };
        for (const p of points.filter((x) => (x.hostname || '?') === h)) {
          const i = at.get(Math.floor(new Date(p.time).getTime() / 1000));
          if (p.base.n) { base.y[i] = p.base.mean; base.sd[i] = p.base.stddev; }
          if (p.patched.n) { pat.y[i] = p.patched.mean; pat.sd[i] = p.patched.stddev; }
        }
        chartSeries.push(base, pat);
      });
      const unit = points[0].unit;
      const fig = el('figure', { class: 'chart wide' });
      const plot = el('div', { class: 'plot' });
      fig.append(plot, el('figcaption', {}, `${cur.metric}${unit ? ` in ${unit}` : ''} at ${users} ${/users=/.test(points[0].params) ? 'users' : 'threads'}: the base line is the branch; dots are the patched builds; mean ± stddev; ${points[0].better} is better`));
      out.append(fig);
      const table = el('table', { class: 'list history' },
        el('thead', {}, el('tr', {}, ['when', 'submission', 'machine', 'tree', 'base mean ± sd', 'patched mean ± sd', 'change', 'verdict']
          .map((h, i) => el('th', { scope: 'col', class: i >= 4 && i <= 6 ? 'num' : null }, h)))),
        el('tbody', {}, [...points].reverse().map((p) => el('tr', {},
          el('td', { 'data-label': 'when' }, when(p.time)),
          el('td', { 'data-label': 'submission' }, el('a', { href: `#/submissions/${p.submission}` }, `#${p.submission} ${p.subject || ''}`)),
          el('td', { 'data-label': 'machine' }, `${p.hostname || '?'} (${p.machine_class})`),
          el('td', { 'data-label': 'tree' }, p.tree ? `${p.tree} (${p.branch})` : 'default'),
          el('td', { class: 'num', 'data-label': 'base' }, `${num(p.base.mean)} ± ${num(p.base.stddev)}`),
          el('td', { class: 'num', 'data-label': 'patched' }, `${num(p.patched.mean)} ± ${num(p.patched.stddev)}`),
          el('td', { class: 'num', 'data-label': 'change' }, pct(p.change)),
          el('td', { 'data-label': 'verdict' }, verdictBadge(p.verdict))))));
      out.append(el('div', { class: 'table-wrap' }, table));
      await lineChart(plot, { title: `${cur.workload} · ${cur.lock} · ${cur.metric} over time`, xLabel: 'time', yLabel: unit || cur.metric, x: times, time: true, series: chartSeries });
    };

    sSel.addEventListener('change', () => { cur = series.find((s) => keyOf(s) === sSel.value); fillUsers(); load(); });
    uSel.addEventListener('change', () => { users = uSel.value; load(); });
    tSel.addEventListener('change', () => { tree = tSel.value; load(); });
    load();
  }).catch((err) => { if (alive) errors.append(errorBox(err, 'The history index could not be loaded')); });

  return () => { alive = false; };
}

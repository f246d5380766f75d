// Alerts: steps the tracker found in a tracked branch's history, confirmed
// by an A/B of the two commits, bisected to the first bad commit.  Each row
// says what moved, by how much, which commit did it (hash, subject, author),
// the bisection's steps, and who set the alert's state and when.  An admin
// sets an alert's state (fixed, invalid, wontfix...) from the form above the
// table with the admin token (PATCH /api/v1/alerts/{id}); the token is kept
// in this tab's sessionStorage only, never in the URL or the page.
import { getJSON, patchJSON } from '../api.js';
import { el, clear, errorBox, ago, when, num, pct, verdictBadge, poll } from '../util.js';
import { lineChart } from '../charts.js';

const POLL_MS = 10000;
// alerts whose chart is open stay open when the list is redrawn
const openCharts = new Set();

function stepsCell(a) {
  const steps = a.steps || [];
  if (steps.length === 0) return el('span', { class: 'muted' }, 'none yet');
  return el('ol', { class: 'steps' }, steps.map((s) => el('li', {},
    el('code', {}, (s.commit || '').slice(0, 12)), ' ',
    s.verdict === 'skip' ? el('span', { class: 'muted' }, 'skipped (did not build)')
      : s.verdict ? verdictBadge(s.verdict) : el('span', { class: 'muted' }, 'running'),
    ' ', s.submission ? el('a', { href: `#/submissions/${s.submission}` }, `#${s.submission}`) : '')));
}

function commitCell(a) {
  if (a.commit) {
    return [el('code', {}, a.commit.slice(0, 12)), ' ', a.subject,
      el('div', { class: 'muted' }, a.author)];
  }
  if (a.reason) return [el('span', {}, a.reason), el('div', { class: 'muted' }, a.bisect_range)];
  return el('span', { class: 'muted' }, `bisecting ${a.bisect_range || a.range}`);
}

// An alert of a fault (the job's verdict splat, lockup or crash), not of a figure.
const isFault = (a) => ['splat', 'lockup', 'crash'].includes(a.metric);

// How the step was found (the API's found_by).
const FOUND_BY = {
  'ab-head': 'found by the A/B of a head run',
  'ab-sample': 'found by the A/B of a sample run',
  changepoint: 'found as a change point, confirmed by A/B',
};

// The history chart: the runs (one value per tracked commit), the step the
// A/B confirmed (before and after levels) and the bisected commit.
function historyChart(a) {
  const hist = a.history || [];
  const seqs = a.seqs || {};
  const commitSeq = seqs.commit ?? (a.commit && a.commit === (a.range || '').split('..')[1] ? seqs.bad : null);
  const xs = [...new Set([...hist.map((p) => p.seq), ...(commitSeq != null ? [commitSeq] : [])])].sort((p, q) => p - q);
  const at = new Map(hist.map((p) => [p.seq, p.value]));
  const box = el('div', { class: 'chart' });
  const details = el('details', {}, el('summary', {}, hist.length === 1 ? 'history (1 point)' : `history (${hist.length} commits)`), box);
  let drawn = false;
  details.addEventListener('toggle', () => {
    if (details.open) openCharts.add(a.id);
    else openCharts.delete(a.id);
    if (!details.open || drawn || xs.length === 0) return;
    drawn = true;
    lineChart(box, {
      title: `${a.workload} ${a.lock} ${a.metric}`,
      xLabel: 'commit (position on the branch)',
      linear: true,
      yLabel: a.unit || a.metric,
      x: xs,
      series: [
        { label: 'runs', y: xs.map((x) => at.get(x) ?? null), sd: null, points: true },
        { label: 'confirmed step', y: xs.map((x) => (x <= seqs.good ? a.before : x >= seqs.bad ? a.after : null)), sd: null, dash: true },
        { label: 'bisected commit', y: xs.map((x) => (x === commitSeq ? a.after : null)), sd: null, points: true },
      ],
    });
  });
  if (openCharts.has(a.id)) details.open = true;
  return details;
}

// Force-pushed branches: the history starts again at the merge base, and no
// bisection crosses the rewrite (an alert whose range was dropped says so).
function rewritesList(trees) {
  const items = [];
  for (const t of trees) {
    for (const w of t.rewrites || []) {
      items.push(el('li', { dataset: { tree: t.name } },
        `${t.name} ${w.branch} was force-pushed ${ago(w.at)}: `,
        el('code', {}, (w.old_head || '').slice(0, 12)), ' is not an ancestor of ',
        el('code', {}, (w.new_head || '').slice(0, 12)), '; ',
        w.merge_base ? ['the history goes on from the merge base ', el('code', {}, w.merge_base.slice(0, 12))]
          : 'the two heads share no commit: the history starts again',
        ` (segment ${w.segment}); commits the rewrite dropped are left out of change points and bisection.`));
    }
  }
  return items.length ? [el('h2', {}, 'Rewritten branches'), el('ul', { id: 'rewrites' }, items)] : [];
}

const STATES = ['new', 'confirmed', 'bisected', 'fixed', 'invalid', 'wontfix'];
const TOKEN_KEY = 'locklab-admin-token';

// The state form: which alert, which state, who, the admin token.  It lives
// outside the polled table so a redraw never resets what is being typed;
// refresh() is called with each new list to keep the alert choices current.
function stateForm(onChanged) {
  const alertSel = el('select', { id: 'a-alert', name: 'alert', required: true });
  const stateSel = el('select', { id: 'a-state', name: 'state' }, STATES.map((s) => el('option', { value: s }, s)));
  const who = el('input', { id: 'a-who', name: 'who', autocomplete: 'name', maxlength: 200, placeholder: 'your name' });
  const token = el('input', { id: 'a-token', name: 'token', type: 'password', autocomplete: 'off',
    value: sessionStorage.getItem(TOKEN_KEY) || '' });
  const result = el('div', { id: 'a-result', 'aria-live': 'polite' });
  const form = el('form', { id: 'alert-state', class: 'inline-form', novalidate: true },
    el('label', {}, 'Alert ', alertSel), ' ',
    el('label', {}, 'state ', stateSel), ' ',
    el('label', {}, 'set by ', who), ' ',
    el('label', {}, 'admin token ', token), ' ',
    el('button', { type: 'submit' }, 'Set state'), result);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(result);
    if (!alertSel.value) { clear(result, el('div', { class: 'error', role: 'alert' }, 'Choose an alert.')); return; }
    if (!token.value) { clear(result, el('div', { class: 'error', role: 'alert' }, 'The admin token is needed to change a state.')); return; }
    const body = { state: stateSel.value };
    if (who.value.trim()) body.who = who.value.trim();
    try {
      await patchJSON(`/api/v1/alerts/${encodeURIComponent(alertSel.value)}`, body, token.value);
      sessionStorage.setItem(TOKEN_KEY, token.value);
      clear(result, el('p', { class: 'ok' }, `Alert #${alertSel.value} is now ${stateSel.value}.`));
      onChanged();
    } catch (err) {
      clear(result, errorBox(err, `Alert #${alertSel.value} was not changed`));
    }
  });
  form.refresh = (alerts) => {
    const keep = alertSel.value;
    clear(alertSel, el('option', { value: '' }, '(choose)'),
      alerts.map((a) => el('option', { value: a.id }, `#${a.id} ${a.workload} ${a.lock} ${a.metric} (${a.state})`)));
    if (alerts.some((a) => String(a.id) === keep)) alertSel.value = keep;
  };
  return form;
}

export function render(main) {
  document.title = 'locklab: alerts';
  const errors = el('div');
  const status = el('p', { class: 'status muted', 'aria-live': 'polite' });
  const tbody = el('tbody');
  const rewrites = el('div');
  let redraw = () => {};
  const form = stateForm(() => redraw());
  main.append(el('h1', {}, 'Alerts'),
    el('p', { class: 'lead' }, 'A step in a tracked branch\'s history becomes an alert only when an interleaved A/B of its two commits confirms it; bisection then names the first bad commit.'),
    errors, status,
    el('div', { class: 'table-wrap' }, el('table', { class: 'list', id: 'alerts' },
      el('thead', {}, el('tr', {}, ['#', 'State', 'Tree', 'Row', 'Change', 'Before → after', 'Commit', 'Bisection']
        .map((h, i) => el('th', { scope: 'col', class: i === 0 ? 'num' : null }, h)))),
      tbody)), form, rewrites);
  const draw = async () => {
    try {
      const [d, tr] = await Promise.all([getJSON('/api/v1/alerts'), getJSON('/api/v1/trees')]);
      clear(errors);
      clear(rewrites, rewritesList(tr.trees || []));
      const alerts = d.alerts || [];
      form.refresh(alerts);
      status.textContent = `${alerts.length} alert${alerts.length === 1 ? '' : 's'}; updated ${new Date().toLocaleTimeString()}`;
      clear(tbody, alerts.length === 0
        ? el('tr', {}, el('td', { colspan: 8, class: 'empty' }, 'No alert: no tracked branch has shown a confirmed step.'))
        : alerts.flatMap((a) => [el('tr', { dataset: { id: a.id } },
          el('td', { class: 'num', 'data-label': '#' }, a.id),
          el('td', { 'data-label': 'State', title: `${a.state_by}, ${when(a.state_at)}` },
            el('span', { class: `badge s-${a.state}` }, a.state), el('div', { class: 'muted' }, `${a.state_by}, ${ago(a.state_at)}`),
            el('div', { class: 'muted found-by' }, FOUND_BY[a.found_by] || '')),
          el('td', { 'data-label': 'Tree' }, `${a.tree} ${a.branch}`),
          el('td', { 'data-label': 'Row' }, `${a.workload} ${a.lock} ${a.metric}`, el('div', { class: 'muted' }, `${a.params} on ${a.machine_class}`)),
          el('td', { class: 'num', 'data-label': 'Change' }, isFault(a) ? a.metric : pct(a.change)),
          el('td', { class: 'num', 'data-label': 'Before → after' }, isFault(a) ? `clean → ${a.metric}` : `${num(a.before)} → ${num(a.after)} ${a.unit || ''}`),
          el('td', { 'data-label': 'Commit', class: 'commit' }, commitCell(a)),
          el('td', { 'data-label': 'Bisection' }, stepsCell(a))),
        // the history chart under its alert, as wide as the table
        el('tr', { dataset: { alert: a.id }, class: 'chart-row' },
          el('td', { colspan: 8, 'data-label': 'History' }, isFault(a)
            ? el('span', { class: 'muted' }, `a ${a.metric}: no figure moved, the commit ran into it where the one before ran clean`)
            : historyChart(a)))]));
    } catch (err) {
      clear(errors, errorBox(err, 'The alerts could not be listed'));
    }
  };
  redraw = draw;
  return poll(draw, POLL_MS);
}

// Submissions: newest first, with state, progress and verdict badges;
// filters by state (server side) and verdict (here); refreshed by polling.
import { getJSON } from '../api.js';
import { el, clear, errorBox, verdictBadge, stateBadge, progress, ago, when, poll } from '../util.js';

const STATES = ['queued', 'running', 'done', 'failed'];
const VERDICTS = [['regression', 'regression'], ['improvement', 'improvement'], ['lockup', 'lockup'],
  ['no-change', 'no-change'], ['inconclusive', 'inconclusive']];
const POLL_MS = 3000;

function select(id, label, options, value) {
  const s = el('select', { id, name: id },
    el('option', { value: '' }, 'all'),
    options.map(([v, l]) => el('option', { value: v, selected: v === value }, l)));
  return [el('label', { for: id }, label), s];
}

function row(s) {
  const active = s.state === 'running' || s.state === 'queued';
  return el('tr', { dataset: { id: s.id, state: s.state, verdict: s.verdict || '' } },
    el('td', { class: 'num', 'data-label': '#' }, el('a', { href: `#/submissions/${s.id}` }, `#${s.id}`)),
    el('td', { class: 'subject', 'data-label': 'Subject' },
      el('a', { href: `#/submissions/${s.id}` }, s.subject || '(no subject)'),
      s.reason ? el('div', { class: 'reason' }, s.reason) : null),
    el('td', { 'data-label': 'Author' }, s.author || '-'),
    el('td', { class: 'num', 'data-label': 'Patches' }, s.patches ?? '-'),
    el('td', { 'data-label': 'Suites' }, (s.suites || []).join(', ')),
    el('td', { 'data-label': 'State' }, stateBadge(s.state),
      active && s.rounds ? progress(s.rounds_complete, s.rounds) : null),
    el('td', { 'data-label': 'Verdict' }, verdictBadge(s.verdict)),
    el('td', { 'data-label': 'Updated', title: when(s.updated) }, ago(s.updated)));
}

export function render(main, params) {
  document.title = 'locklab: submissions';
  let state = params.get('state') || '';
  let verdict = params.get('verdict') || '';
  if (!STATES.includes(state)) state = '';
  const [stateLabel, stateSel] = select('filter-state', 'State', STATES.map((s) => [s, s]), state);
  const [verdictLabel, verdictSel] = select('filter-verdict', 'Verdict', VERDICTS, verdict);
  const status = el('p', { class: 'status muted', 'aria-live': 'polite' });
  const errors = el('div');
  const tbody = el('tbody');
  const table = el('table', { class: 'list', id: 'submissions' },
    el('caption', { class: 'sr-only' }, 'Submissions, newest first'),
    el('thead', {}, el('tr', {}, ['#', 'Subject', 'Author', 'Patches', 'Suites', 'State', 'Verdict', 'Updated']
      .map((h, i) => el('th', { scope: 'col', class: i === 0 || i === 3 ? 'num' : null }, h)))),
    tbody);
  let last = null;

  const draw = () => {
    if (!last) return;
    const rows = last.filter((s) => !verdict || s.verdict === verdict);
    if (rows.length === 0) {
      clear(tbody, el('tr', {}, el('td', { colspan: 8, class: 'empty' },
        last.length ? 'No submission has this verdict.' : 'No submissions yet. ', last.length ? null : el('a', { href: '#/submit' }, 'Submit one.'))));
    } else {
      clear(tbody, rows.map(row));
    }
  };
  const refresh = async () => {
    try {
      const q = new URLSearchParams({ limit: '200' });
      if (state) q.set('state', state);
      const d = await getJSON(`/api/v1/submissions?${q}`);
      last = d.submissions || [];
      clear(errors);
      draw();
      const live = last.some((s) => s.state === 'running' || s.state === 'queued');
      status.textContent = `${last.length} shown; updated ${new Date().toLocaleTimeString()}${live ? ', following running jobs' : ''}`;
    } catch (err) {
      clear(errors, errorBox(err, 'The submissions could not be loaded'));
    }
  };
  const setHash = () => {
    const q = new URLSearchParams();
    if (state) q.set('state', state);
    if (verdict) q.set('verdict', verdict);
    const s = q.toString();
    history.replaceState(null, '', `#/submissions${s ? `?${s}` : ''}`);
  };
  stateSel.addEventListener('change', () => { state = stateSel.value; setHash(); last = null; refresh(); });
  verdictSel.addEventListener('change', () => { verdict = verdictSel.value; setHash(); draw(); });

  main.append(
    el('div', { class: 'page-head' }, el('h1', {}, 'Submissions'),
      el('a', { class: 'button', href: '#/submit' }, 'Submit a patch')),
    el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() },
      el('div', {}, stateLabel, stateSel), el('div', {}, verdictLabel, verdictSel)),
    errors, status, el('div', { class: 'table-wrap' }, table));
  return poll(refresh, POLL_MS);
}

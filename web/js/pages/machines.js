// Machines: the registered agents, their hardware (from the last result
// they posted), last heartbeat and the job they hold.
import { getJSON } from '../api.js';
import { el, clear, errorBox, ago, when, progress, poll } from '../util.js';

const POLL_MS = 5000;

export function render(main) {
  document.title = 'locklab: machines';
  const errors = el('div');
  const status = el('p', { class: 'status muted', 'aria-live': 'polite' });
  const tbody = el('tbody');
  main.append(el('h1', {}, 'Machines'),
    el('p', { class: 'lead' }, 'Agents claim one job at a time; a job whose agent stops heartbeating goes back to the queue.'),
    errors, status,
    el('div', { class: 'table-wrap' }, el('table', { class: 'list', id: 'agents' },
      el('thead', {}, el('tr', {}, ['#', 'Name', 'Machine class', 'Hardware', 'Last seen', 'Current job']
        .map((h, i) => el('th', { scope: 'col', class: i === 0 ? 'num' : null }, h)))),
      tbody)));
  return poll(async () => {
    try {
      const d = await getJSON('/api/v1/agents');
      clear(errors);
      const agents = d.agents || [];
      status.textContent = `${agents.length} agent${agents.length === 1 ? '' : 's'}; updated ${new Date().toLocaleTimeString()}`;
      clear(tbody, agents.length === 0
        ? el('tr', {}, el('td', { colspan: 6, class: 'empty' }, 'No agent is registered (POST /api/v1/agents/register with the admin token).'))
        : agents.map((a) => {
          const m = a.machine;
          const j = a.job;
          return el('tr', { dataset: { id: a.id } },
            el('td', { class: 'num', 'data-label': '#' }, a.id),
            el('td', { 'data-label': 'Name' }, a.name || '(unnamed)'),
            el('td', { 'data-label': 'Machine class' }, a.machine_class),
            el('td', { 'data-label': 'Hardware' }, m ? `${m.hostname}: ${m.cpus} cpus, ${m.model}, kernel ${m.kernel}` : el('span', { class: 'muted' }, 'no result posted yet')),
            el('td', { 'data-label': 'Last seen', title: when(a.last_seen) }, ago(a.last_seen)),
            el('td', { 'data-label': 'Current job' }, j
              ? [el('a', { href: `#/submissions/${j.submission_id}` }, `#${j.submission_id} ${j.subject || ''}`),
                el('div', {}, `job #${j.id}, ${j.suite} `, progress(j.rounds_complete, j.rounds)),
                j.activity ? el('div', { class: 'activity muted', title: when(j.activity_at) }, j.activity) : null]
              : el('span', { class: 'muted' }, 'idle')));
        }));
    } catch (err) {
      clear(errors, errorBox(err, 'The agents could not be listed'));
    }
  }, POLL_MS);
}

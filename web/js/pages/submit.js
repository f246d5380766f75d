// Submit: a patch URL, a pasted (or chosen) mbox, or a git URL + ref; tree,
// suites and where the reply goes.  Shows the new submission, or the
// server's reason for refusing it, verbatim.
import { getJSON, postJSON } from '../api.js';
import { el, clear, errorBox } from '../util.js';

const SUITES = [
  ['smoke', 'seconds; for tests'],
  ['quick', 'every lock on the core workloads, ~20 s a round'],
  ['full', 'every workload'],
  ['kernel', 'inside a booted patched kernel'],
];

export function render(main) {
  document.title = 'locklab: submit';
  const sources = [
    ['url', 'Patch URL'],
    ['mbox', 'Pasted mbox'],
    ['git', 'Git URL + ref'],
  ];
  const result = el('div', { id: 'submit-result', 'aria-live': 'polite' });
  const treeSelect = el('select', { id: 'f-tree', name: 'tree' }, el('option', { value: '' }, '(default native tree)'));
  const treeNote = el('div');

  const fileInput = el('input', { type: 'file', id: 'f-mbox-file', accept: '.mbox,.patch,.eml,.txt,text/plain' });
  const mbox = el('textarea', { id: 'f-mbox', name: 'mbox', rows: 12, spellcheck: 'false',
    placeholder: 'From 1234abcd Mon Sep 17 00:00:00 2001\nFrom: ...\nSubject: [PATCH 1/2] locking/mutex: ...' });
  fileInput.addEventListener('change', async () => {
    const f = fileInput.files[0];
    if (f) mbox.value = await f.text();
  });

  const panels = {
    url: el('div', { class: 'panel', id: 'p-url' },
      el('label', { for: 'f-url' }, 'Patch or series URL (mbox, raw, .mbox.gz)'),
      el('input', { id: 'f-url', name: 'url', type: 'url', inputmode: 'url', autocomplete: 'off',
        placeholder: 'https://lore.kernel.org/lkml/<message-id>/t.mbox.gz' })),
    mbox: el('div', { class: 'panel', id: 'p-mbox' },
      el('label', { for: 'f-mbox' }, 'The mbox: one mail or a whole thread'),
      mbox,
      el('label', { for: 'f-mbox-file', class: 'small' }, 'or read a file: '), fileInput),
    git: el('div', { class: 'panel', id: 'p-git' },
      el('div', { class: 'row' },
        el('div', {}, el('label', { for: 'f-git-url' }, 'Git URL'),
          el('input', { id: 'f-git-url', name: 'git-url', autocomplete: 'off', placeholder: 'https://git.example.org/linux.git' })),
        el('div', {}, el('label', { for: 'f-git-ref' }, 'Ref'),
          el('input', { id: 'f-git-ref', name: 'git-ref', autocomplete: 'off', placeholder: 'locking/core' })),
        el('div', {}, el('label', { for: 'f-git-base' }, 'Base (optional)'),
          el('input', { id: 'f-git-base', name: 'git-base', autocomplete: 'off', placeholder: 'v6.1' })))),
  };

  const radios = sources.map(([v, label], i) => el('label', { class: 'radio' },
    el('input', { type: 'radio', name: 'source', value: v, checked: i === 0 }), ` ${label}`));
  const show = () => {
    const v = main.querySelector('input[name=source]:checked').value;
    for (const [k, p] of Object.entries(panels)) p.hidden = k !== v;
  };

  const suiteBoxes = SUITES.map(([name, what]) => el('label', { class: 'check' },
    el('input', { type: 'checkbox', name: 'suite', value: name, checked: name === 'quick' }),
    ` ${name} `, el('span', { class: 'muted' }, `(${what})`)));
  const otherSuites = el('input', { id: 'f-suites-other', name: 'suites-other', autocomplete: 'off', placeholder: 'other suite names, space separated' });
  const notify = el('input', { id: 'f-notify', name: 'notify', type: 'email', autocomplete: 'email',
    placeholder: 'default: the patch author' });
  const button = el('button', { type: 'submit', class: 'primary', id: 'f-submit' }, 'Submit');

  const form = el('form', { id: 'submit-form', novalidate: true },
    el('fieldset', {}, el('legend', {}, 'Source'), el('div', { class: 'radios' }, radios),
      Object.values(panels)),
    el('fieldset', {}, el('legend', {}, 'What to run'),
      el('div', { class: 'row' },
        el('div', {}, el('label', { for: 'f-tree' }, 'Tree'), treeSelect, treeNote),
        el('div', {}, el('label', { for: 'f-notify' }, 'Reply to'), notify)),
      el('div', { class: 'suites', role: 'group', 'aria-label': 'Suites' }, el('span', { class: 'label' }, 'Suites'), suiteBoxes),
      el('label', { for: 'f-suites-other' }, 'More suites'), otherSuites),
    el('div', { class: 'actions' }, button));

  form.addEventListener('change', (e) => { if (e.target.name === 'source') show(); });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const source = form.querySelector('input[name=source]:checked').value;
    const body = {};
    if (source === 'url') body.url = main.querySelector('#f-url').value.trim();
    else if (source === 'mbox') body.mbox = mbox.value;
    else {
      body.git = { url: main.querySelector('#f-git-url').value.trim(), ref: main.querySelector('#f-git-ref').value.trim() };
      const base = main.querySelector('#f-git-base').value.trim();
      if (base) body.git.base = base;
    }
    const suites = [...form.querySelectorAll('input[name=suite]:checked')].map((c) => c.value)
      .concat(otherSuites.value.split(/[\s,]+/).filter(Boolean));
    if (suites.length) body.suites = [...new Set(suites)];
    if (treeSelect.value) body.tree = treeSelect.value;
    if (notify.value.trim()) body.notify = notify.value.trim();
    // nothing is checked here that the server checks: its reason is the one shown
    button.disabled = true;
    clear(result, el('p', { class: 'muted' }, 'Submitting…'));
    try {
      const { body: r } = await postJSON('/api/v1/submissions', body);
      clear(result, el('div', { class: 'ok', id: 'submit-ok' },
        el('p', {}, el('strong', {}, `Submission #${r.id} ${r.state}`), ': ', r.subject || '(no subject)'),
        el('p', {}, `${r.patches} patch${r.patches === 1 ? '' : 'es'}, source ${r.source}, `,
          `${(r.jobs || []).length} job${(r.jobs || []).length === 1 ? '' : 's'}. `,
          el('a', { href: `#/submissions/${r.id}`, id: 'submit-link' }, `Follow submission #${r.id}`))));
    } catch (err) {
      clear(result, el('div', { id: 'submit-refused' },
        errorBox(err, 'The server refused the submission')));
    } finally {
      button.disabled = false;
    }
  });

  main.append(el('h1', {}, 'Submit a patch or series'),
    el('p', { class: 'lead' }, 'locklab builds the tree with and without the series, runs the suites in interleaved rounds and answers with the tables.'),
    form, result);
  show();

  getJSON('/api/v1/trees').then((d) => {
    for (const t of d.trees || []) treeSelect.append(el('option', { value: t.name }, `${t.name} (${t.branch}, ${t.kind})`));
  }).catch((err) => treeNote.append(errorBox(err, 'Trees could not be listed')));
}

// app.js - the dashboard's hash router: #/submit, #/submissions[?state&verdict],
// #/submissions/ID, #/machines, #/history[?...], #/alerts.  Each page module exports
// render(main, params, match) and may return a cleanup function (it stops
// its pollers when the person leaves the page).
import { el, clear } from './util.js';
import * as submit from './pages/submit.js';
import * as list from './pages/list.js';
import * as submission from './pages/submission.js';
import * as machines from './pages/machines.js';
import * as history from './pages/history.js';
import * as alerts from './pages/alerts.js';

const routes = [
  [/^\/submit$/, submit, 'submit'],
  [/^\/submissions$/, list, 'submissions'],
  [/^\/submissions\/(\d+)$/, submission, 'submissions'],
  [/^\/machines$/, machines, 'machines'],
  [/^\/history$/, history, 'history'],
  [/^\/alerts$/, alerts, 'alerts'],
];

let cleanup = null;
let first = true;

function route() {
  const hash = decodeURIComponent(location.hash.replace(/^#/, '')) || '/submissions';
  const q = hash.indexOf('?');
  const path = q < 0 ? hash : hash.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
  const main = document.getElementById('main');
  if (cleanup) cleanup();
  cleanup = null;
  clear(main);
  let page = null;
  for (const [re, mod, name] of routes) {
    const m = path.match(re);
    if (m) {
      page = name;
      const c = mod.render(main, params, m);
      cleanup = typeof c === 'function' ? c : null;
      break;
    }
  }
  if (!page) {
    document.title = 'locklab: no such page';
    main.append(el('h1', {}, 'No such page'),
      el('p', {}, 'Nothing lives at ', el('code', {}, `#${path}`), '. ',
        el('a', { href: '#/submissions' }, 'See the submissions.')));
  }
  for (const a of document.querySelectorAll('header nav a')) {
    if (a.dataset.page === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  // keyboard and screen-reader users land on the new content
  if (!first) main.focus({ preventScroll: true });
  first = false;
  window.scrollTo(0, 0);
}

window.addEventListener('hashchange', route);
route();

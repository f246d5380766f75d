// util.js - DOM building, number and time formatting, badges, error boxes
// and the poller every live page uses.

/* el('a', {href: '#/x', class: 'y'}, 'text', child...) -> element.  Strings
 * become text nodes (never HTML); null/false children are skipped. */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, String(v));
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/* A figure as the reports print it: thousands apart, few decimals. */
export function num(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  const a = Math.abs(v);
  const d = digits ?? (a >= 1000 ? 0 : a >= 100 ? 1 : a >= 1 ? 2 : 4);
  return v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: 0 });
}

export function pct(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  const s = (v * 100).toFixed(1);
  return (v >= 0 ? '+' : '') + s + '%';
}

export function pval(v) {
  if (v === null || v === undefined) return '-';
  if (v === 0) return '0';
  return v < 0.001 ? v.toExponential(2) : v.toPrecision(3);
}

export function when(iso) {
  if (!iso) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/:\d\dZ$/, 'Z');
}

export function ago(iso) {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/* The verdict words of the server: a badge says the word the text beside it says. */
export const VERDICT_LABEL = {
  regression: 'regression', improvement: 'improvement', lockup: 'lockup', crash: 'crash',
  'no-change': 'no-change', inconclusive: 'inconclusive',
};

export function verdictBadge(v) {
  if (!v) return el('span', { class: 'badge none' }, '-');
  return el('span', { class: `badge v-${v}`, title: v }, VERDICT_LABEL[v] || v);
}

export function stateBadge(s) {
  return el('span', { class: `badge s-${s}` }, s);
}

export function progress(done, want) {
  const d = Number(done) || 0;
  const w = Math.max(Number(want) || 0, d, 1);
  return el('span', { class: 'progress' },
    el('progress', { max: w, value: d, 'aria-label': `${d} of ${w} rounds complete` }),
    el('span', { class: 'progress-text' }, `${d}/${w} rounds`));
}

/* The words a person reads when an API call failed: status, code, reason. */
export function errorBox(err, what) {
  const status = err && err.status ? `HTTP ${err.status}` : 'no answer';
  const code = err && err.error ? err.error : 'error';
  const detail = err && (err.detail ?? err.message);
  return el('div', { class: 'error', role: 'alert' },
    el('strong', {}, what ? `${what}: ` : ''),
    el('span', { class: 'error-code' }, `${status} ${code}`),
    detail ? [' — ', el('span', { class: 'error-detail' }, detail)] : null);
}

/* Call fn now and every ms while the page is the current one; fn returns
 * false to stop.  Returns a stop function. */
export function poll(fn, ms) {
  let timer = null;
  let stopped = false;
  const tick = async () => {
    timer = null;
    if (stopped) return;
    let again = true;
    try {
      again = (await fn()) !== false;
    } catch (e) {
      console.error(e);
    }
    if (!stopped && again) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; if (timer) clearTimeout(timer); };
}

/* "cs_ns=100,threads=4" -> {cs_ns: '100', threads: '4'} */
export function parseParams(key) {
  const out = {};
  for (const part of (key || '').split(',')) {
    if (!part) continue;
    const i = part.indexOf('=');
    out[i < 0 ? part : part.slice(0, i)] = i < 0 ? '' : part.slice(i + 1);
  }
  return out;
}

/* params minus the users/threads axis: what tells two charts apart */
export function otherParams(key) {
  return (key || '').split(',').filter((p) => p && !/^(threads|users)=/.test(p)).join(',');
}

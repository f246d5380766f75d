// charts.js - uPlot charts with error bars.  uPlot is loaded on first use
// from /vendor/ (copied from node_modules by web/scripts/vendor.mjs), so
// that a missing copy breaks only the charts, with a message, not the page.
import { el, num } from './util.js';

let uplotPromise = null;

function loadUPlot() {
  if (!uplotPromise) {
    const css = document.createElement('link');
    css.rel = 'stylesheet';
    css.href = '/vendor/uPlot.min.css';
    document.head.append(css);
    uplotPromise = import('/vendor/uPlot.esm.js').then((m) => m.default);
    uplotPromise.catch(() => { uplotPromise = null; });
  }
  return uplotPromise;
}

export const COLORS = ['#1d4ed8', '#c2410c', '#15803d', '#7e22ce', '#be123c', '#0e7490', '#854d0e'];

/* Draw mean +- stddev whiskers for every shown series that has sd[i]. */
function errorBarsPlugin(sd) {
  return {
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        ctx.lineWidth = Math.max(1, devicePixelRatio);
        for (let i = 1; i < u.series.length; i++) {
          const s = u.series[i];
          if (!s.show || !sd[i]) continue;
          ctx.strokeStyle = s._stroke || COLORS[(i - 1) % COLORS.length];
          const cap = 4 * devicePixelRatio;
          for (let j = 0; j < u.data[0].length; j++) {
            const m = u.data[i][j];
            const d = sd[i][j];
            if (m === null || m === undefined || !d) continue;
            const x = u.valToPos(u.data[0][j], 'x', true);
            const y0 = u.valToPos(m - d, 'y', true);
            const y1 = u.valToPos(m + d, 'y', true);
            ctx.beginPath();
            ctx.moveTo(x, y0); ctx.lineTo(x, y1);
            ctx.moveTo(x - cap, y0); ctx.lineTo(x + cap, y0);
            ctx.moveTo(x - cap, y1); ctx.lineTo(x + cap, y1);
            ctx.stroke();
          }
        }
        ctx.restore();
      }],
    },
  };
}

function short(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toPrecision(3)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(4)}`;
}

/*
 * A chart in container.  spec: {title, xLabel, yLabel, x: [...], time: bool,
 * linear: bool (no log x axis), height,
 * series: [{label, y: [...], sd: [...]|null, dash: bool, points: bool}]}.
 * Returns the uPlot instance (or shows why there is none); one x value is
 * said in words ("1 point") and returns null.
 */
export async function lineChart(container, spec) {
  let uPlot;
  try {
    uPlot = await loadUPlot();
  } catch (e) {
    container.append(el('p', { class: 'error', role: 'alert' },
      `charts unavailable: /vendor/uPlot.esm.js did not load (${e.message}); run npm ci in web/`));
    return null;
  }
  const xs = spec.x;
  // one point is no line: say it in words instead of drawing an axis around a dot
  if (xs.length === 1) {
    const x = spec.time ? new Date(xs[0] * 1000).toLocaleString() : num(xs[0]);
    const vals = spec.series.filter((s) => s.y[0] !== null && s.y[0] !== undefined)
      .map((s) => `${s.label} ${num(s.y[0])}${s.sd && s.sd[0] ? ` ± ${num(s.sd[0])}` : ''}`);
    container.append(el('p', { class: 'one-point', dataset: { points: '1' } },
      el('strong', {}, spec.title), ': 1 point, at ', `${spec.xLabel} ${x}: `, vals.join('; ') || 'no value',
      el('span', { class: 'muted' }, ' (a chart needs two)')));
    return null;
  }
  const positive = xs.length > 0 && xs.every((v) => v > 0);
  const logX = !spec.time && !spec.linear && positive && Math.max(...xs) / Math.min(...xs) >= 4;
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of spec.series) {
    s.y.forEach((v, j) => {
      if (v === null || v === undefined) return;
      const d = (s.sd && s.sd[j]) || 0;
      lo = Math.min(lo, v - d);
      hi = Math.max(hi, v + d);
    });
  }
  if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;
  const xmin = Math.min(...xs);
  const xmax = Math.max(...xs);
  const tpad = Math.max(3600, (xmax - xmin) * 0.05);
  const xRange = spec.time
    ? [xmin - tpad, xmax + tpad]
    : logX ? [xmin / 1.4, xmax * 1.4]
      : [xmin - Math.max(1, (xmax - xmin) * 0.08), xmax + Math.max(1, (xmax - xmin) * 0.08)];
  const sd = [null, ...spec.series.map((s) => s.sd)];
  const width = Math.max(260, Math.floor(container.clientWidth || 600));
  const opts = {
    title: spec.title,
    width,
    height: spec.height || 260,
    scales: {
      x: spec.time ? { time: true, range: xRange } : { time: false, distr: logX ? 3 : 1, log: 2, range: xRange },
      y: { range: [lo - pad, hi + pad] },
    },
    axes: [
      {
        label: spec.xLabel,
        ...(spec.time ? {} : { values: (u, vals) => vals.map((v) => (v === null ? '' : short(v))) }),
        // the measured thread counts are the ticks (1 2 4 8 ..., not 0.71 1.2)
        ...(spec.time ? {} : { splits: () => xs }),
      },
      { label: spec.yLabel, size: 64, values: (u, vals) => vals.map((v) => (v === null ? '' : short(v))) },
    ],
    legend: { live: true },
    series: [
      { label: spec.xLabel, value: spec.time ? '{YYYY}-{MM}-{DD} {HH}:{mm}' : (u, v) => (v === null ? '-' : num(v)) },
      ...spec.series.map((s, i) => ({
        label: s.label,
        stroke: s.color || COLORS[i % COLORS.length],
        width: 2,
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: true,
        paths: s.points ? () => null : undefined,
        points: { show: true, size: 7, fill: s.color || COLORS[i % COLORS.length] },
        value: (u, v, si, idx) => {
          if (v === null || v === undefined) return '-';
          const d = s.sd && idx !== null && idx !== undefined ? s.sd[idx] : null;
          return d ? `${num(v)} ± ${num(d)}` : num(v);
        },
      })),
    ],
    plugins: [errorBarsPlugin(sd)],
  };
  const data = [xs, ...spec.series.map((s) => s.y)];
  const u = new uPlot(opts, data, container);
  // follow the container's width (1280 px screens and phones alike)
  const ro = new ResizeObserver(() => {
    const w = Math.max(260, Math.floor(container.clientWidth));
    if (Math.abs(w - u.width) > 4) u.setSize({ width: w, height: u.height });
  });
  ro.observe(container);
  u.root.setAttribute('role', 'img');
  u.root.setAttribute('aria-label', spec.title);
  return u;
}

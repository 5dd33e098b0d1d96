// stats.js: the Server panel: server_stats polled every STATS_POLL_MS while
// the page is connected and visible (one call at a time: a slow answer
// delays the next poll, never piles calls up), the last STATS_KEPT samples
// charted on a canvas, one strip per series, each on its own scale: ticks a
// second, tick work (p50 and p99, microseconds), late ticks a second, stream
// frames dropped a second, connections. Counters (ticks, late ticks, frames
// dropped) are charted as rates between two samples; gauges as they are.
// state.stats holds the samples (the server's figures as they came) and
// what the chart drew last.
//
// What it does not: ask for anything but server_stats, or need an admin
// connection (server_stats is any connection's).
import { $, app, fmt, state } from './shared.js';
import { conn } from './session.js';

export const STATS_POLL_MS = 1000; // at most one server_stats a second
const STATS_KEPT = 120; // two minutes at one a second

const stats = state.stats;
const num = (v) => Number(v.toString()); // uint64 arrives as a Long

// The series the chart draws: its label, colour and value from a sample
// and the one before it (null where it has none).
const SERIES = [
  { key: 'ticks', label: 'ticks/s', colour: '#4fc3f7', value: (s, p) => rate(s, p, 'ticks') },
  { key: 'work', label: 'tick work p50 / p99 µs', colour: '#81c784', value: (s) => s.tick_work_p50_us,
    second: (s) => s.tick_work_p99_us },
  { key: 'late', label: 'late ticks/s', colour: '#ffb74d', value: (s, p) => rate(s, p, 'ticks_late') },
  { key: 'dropped', label: 'frames dropped/s', colour: '#e57373', value: (s, p) => rate(s, p, 'frames_dropped') },
  { key: 'connections', label: 'connections', colour: '#ba68c8', value: (s) => s.connections },
];

function rate(s, p, key) {
  if (!p) return null;
  const seconds = (s.uptime_us - p.uptime_us) / 1e6;
  return seconds > 0 ? (s[key] - p[key]) / seconds : null;
}

// One poll: a sample kept and the chart drawn. Returns the sample.
export async function pollStats() {
  const c = conn;
  if (!c || !state.connected) return null;
  const r = await c.call('server_stats', {});
  const sample = { at: Date.now(), uptime_us: num(r.uptime_us), ticks: num(r.ticks), ticks_late: num(r.ticks_late),
    ticks_skipped: num(r.ticks_skipped), tick_work_p50_us: num(r.tick_work_p50_us),
    tick_work_p99_us: num(r.tick_work_p99_us), frames_dropped: num(r.frames_dropped), connections: r.connections,
    characters: r.characters, tick_rate: r.tick_rate };
  // A restarted server's counters start again: so does the chart.
  const last = stats.samples[stats.samples.length - 1];
  if (last && sample.uptime_us < last.uptime_us) stats.samples.length = 0;
  stats.samples.push(sample);
  if (stats.samples.length > STATS_KEPT) stats.samples.shift();
  stats.polls++;
  drawStats();
  return sample;
}

// The chart: a strip a series, its latest value written on it.
function drawStats() {
  const canvas = $('stats-chart');
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, strip = h / SERIES.length;
  ctx.clearRect(0, 0, w, h);
  ctx.font = '9px monospace';
  const samples = stats.samples;
  const step = w / (STATS_KEPT - 1);
  const x0 = w - (samples.length - 1) * step;
  stats.drawn = {};
  SERIES.forEach((series, si) => {
    const top = si * strip + 3, bottom = (si + 1) * strip - 2;
    const values = samples.map((s, i) => series.value(s, samples[i - 1]));
    const seconds = series.second ? samples.map((s) => series.second(s)) : [];
    const max = Math.max(1e-9, ...values.filter((v) => v !== null), ...seconds) * 1.15;
    const y = (v) => bottom - (v / max) * (bottom - top);
    ctx.strokeStyle = '#2e343c';
    ctx.beginPath(); ctx.moveTo(0, bottom + 1); ctx.lineTo(w, bottom + 1); ctx.stroke();
    const line = (vs, colour, dash) => {
      ctx.strokeStyle = colour;
      ctx.setLineDash(dash);
      ctx.beginPath();
      let started = false;
      vs.forEach((v, i) => {
        if (v === null) return;
        const x = x0 + i * step;
        if (started) ctx.lineTo(x, y(v)); else ctx.moveTo(x, y(v));
        started = true;
      });
      ctx.stroke();
      ctx.setLineDash([]);
    };
    line(values, series.colour, []);
    if (series.second) line(seconds, series.colour, [3, 2]);
    const latest = values[values.length - 1];
    const latest2 = series.second ? seconds[seconds.length - 1] : undefined;
    stats.drawn[series.key] = latest2 === undefined ? latest : [latest, latest2];
    ctx.fillStyle = '#8a94a0';
    const shown = (v) => (v === null || v === undefined ? '-' : fmt(v, Number.isInteger(v) ? 0 : 1));
    ctx.fillText(`${series.label}: ${shown(latest)}${latest2 === undefined ? '' : ` / ${shown(latest2)}`}`, 3, top + 8);
  });
  const s = samples[samples.length - 1];
  $('stats-info').textContent = s ? `${s.characters} characters, ${s.tick_rate} Hz; ${s.ticks} ticks, ` +
    `${s.ticks_late} late, ${s.ticks_skipped} skipped, ${s.frames_dropped} frames dropped` : '';
}

// Polls while connected and visible, STATS_POLL_MS apart, start to start.
async function loop() {
  for (;;) {
    const started = Date.now();
    if ($('stats-on').checked && !document.hidden && state.connected) {
      try {
        await pollStats();
        stats.error = null;
      } catch (e) {
        stats.error = e.message; // the connection went meanwhile, or the server said why: shown, not toasted
        $('stats-info').textContent = `server_stats: ${e.message}`;
      }
    }
    await new Promise((r) => setTimeout(r, Math.max(50, STATS_POLL_MS - (Date.now() - started))));
  }
}

loop();
Object.assign(app, { pollStats });

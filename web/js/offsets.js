// offsets.js: the Inertialization offsets panel: from each character_state
// of the driven character, the summed position offsets and the largest
// rotation offset of its inertializer, charted over the last CHART_SECONDS
// with its transitions marked (state.character.offsets: the latest).
// It asks for nothing: character.js hands it each state it polls.
import { $, state } from './shared.js';

const CHART_SECONDS = 6;
const chart = [];

// Adds character_state `s` (asked with offsets) to the chart.
export function recordOffsets(s) {
  const o = s.inertializer;
  let position = 0, rotation = 0;
  const n = o.offset_positions.length / 3;
  for (let b = 1; b < n; b++) {
    position += Math.hypot(o.offset_positions[3 * b], o.offset_positions[3 * b + 1], o.offset_positions[3 * b + 2]);
    const w = Math.min(1, Math.abs(o.offset_rotations[4 * b]));
    rotation = Math.max(rotation, 2 * Math.acos(w) * 180 / Math.PI);
  }
  const last = chart[chart.length - 1];
  const transitions = Number(s.transitions.toString());
  chart.push({ t: performance.now() / 1000, position, rotation, transition: last && transitions > last.transitions, transitions });
  while (chart.length && chart[0].t < chart[chart.length - 1].t - CHART_SECONDS) chart.shift();
  state.character.offsets = { position, rotation };
  drawChart();
}

// An empty chart (a new character, or none).
export function clearOffsets() {
  chart.length = 0;
  drawChart();
}

function drawChart() {
  const canvas = $('offsets-chart');
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  if (chart.length < 2) return;
  const t1 = chart[chart.length - 1].t, t0 = t1 - CHART_SECONDS;
  const x = (t) => ((t - t0) / CHART_SECONDS) * w;
  const maxP = Math.max(0.05, ...chart.map((c) => c.position));
  const maxR = Math.max(5, ...chart.map((c) => c.rotation));
  ctx.strokeStyle = '#2e343c';
  for (let i = 1; i < 4; i++) { ctx.beginPath(); ctx.moveTo(0, (h * i) / 4); ctx.lineTo(w, (h * i) / 4); ctx.stroke(); }
  ctx.strokeStyle = '#e57373';
  for (const c of chart) if (c.transition) { ctx.beginPath(); ctx.moveTo(x(c.t), 0); ctx.lineTo(x(c.t), h); ctx.stroke(); }
  const line = (key, max, color) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    chart.forEach((c, i) => { const y = h - 4 - (c[key] / max) * (h - 10); if (i) ctx.lineTo(x(c.t), y); else ctx.moveTo(x(c.t), y); });
    ctx.stroke();
  };
  line('position', maxP, '#4fc3f7');
  line('rotation', maxR, '#ffb74d');
  ctx.fillStyle = '#8a94a0';
  ctx.font = '10px monospace';
  ctx.fillText(`${maxP.toFixed(2)} m / ${maxR.toFixed(0)}°`, 4, 11);
}

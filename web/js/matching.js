// matching.js: the Matching panel: the driven character's query as it would
// search now (character_state with query), searched with the controller's
// settings, explain and include_features: the best frame and the runner-up
// with the margin, the cost split by feature group (bars), and the query's
// and the match's normalized features column by column (the chart), each
// group shaded by its share of the cost. state.match holds what it shows.
//
// It polls nothing itself: character.js hands it a state now and then
// (explainMatchOrSay) and clears it with the character (clearMatch).
import { $, fmt, state, toast } from './shared.js';
import { conn } from './session.js';

// The controller's search settings (ControllerParams defaults, which the
// page's characters keep), so the page's search of a character's query finds
// what the character's own search would.
const CONTROLLER_SEARCH = { ignore_surrounding: 20, ignore_range_end: 20, transition_cost: 0.01 };

// A failed search (the database unloaded under a character that keeps
// running on it) says so once and in the panel; the state goes on.
export async function explainMatchOrSay(s, skeleton) {
  try {
    await explainMatch(s, skeleton);
    state.matchError = null;
  } catch (e) {
    if (!state.character.id) return; // gone meanwhile (destroyed, connection lost): nothing to say
    if (e.message !== state.matchError) toast(e.message);
    state.matchError = e.message;
    state.match = null;
    $('match-info').textContent = `no match: ${e.message}`;
  }
}

// Nothing shown belongs to a character that is not there.
export function clearMatch() {
  state.match = null;
  state.matchError = null;
  for (const id of ['match-info', 'cost-bars']) $(id).innerHTML = '';
  const features = $('feature-chart');
  features.getContext('2d').clearRect(0, 0, features.width, features.height);
}

// The character's query as it would search now, searched with the
// controller's settings, explained (cost split by feature group, margin to
// the runner-up) and with the feature rows: the match the character's next
// search would find, and why.
async function explainMatch(s, skeleton) {
  if (!s.query.length) return;
  const query = {
    features: s.query, current_frame: { frame: s.frame }, ...CONTROLLER_SEARCH, k: 2, explain: true,
    include_features: true,
  };
  const answer = await conn.call('search', { database: state.character.database, query });
  const r = answer.result;
  const best = r.matches[0];
  const groups = skeleton.describe.features.map((f, i) => ({
    name: r.explanation[i].name, cost: r.explanation[i].cost, first: f.first_column, dims: f.dims,
  }));
  state.match = {
    frame: best.frame, range: best.range_name, cost: best.cost, margin: r.margin, current: s.frame,
    transitionCost: best.frame === s.frame ? 0 : CONTROLLER_SEARCH.transition_cost, // in cost, not in the groups
    groups, query: Array.from(r.query), features: Array.from(best.features),
    runnerUp: r.matches[1] ? { frame: r.matches[1].frame, range: r.matches[1].range_name, cost: r.matches[1].cost } : null,
  };
  const stays = best.frame === s.frame;
  $('match-info').textContent = `playing ${s.frame} (${s.range_name})\n` +
    `best    ${best.frame} (${best.range_name}) cost ${fmt(best.cost, 4)}${stays ? '  = playing: stays' : ''}\n` +
    (r.matches[1] ? `runner-up ${r.matches[1].frame} (${r.matches[1].range_name}), margin ${fmt(r.margin, 4)}` : '');
  const total = r.explanation.reduce((a, g) => a + g.cost, 0);
  const scale = Math.max(total, 1e-3); // below this the split is noise: short bars
  $('cost-bars').innerHTML = groups.map((g) => `<div class="bar"><span>${g.name}</span>` +
    `<div class="track"><div class="fill" style="width:${(100 * g.cost / scale).toFixed(1)}%"></div></div>` +
    `<span class="val">${fmt(g.cost, 4)}</span></div>`).join('');
  drawFeatures(state.match);
}

// Query (blue) against match (orange), column by column, grouped by feature
// group: normalized values, clipped to +-CLIP.
function drawFeatures(m) {
  const canvas = $('feature-chart');
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, CLIP = 3, top = 6, bottom = h - 16;
  const mid = (top + bottom) / 2, unit = (bottom - top) / (2 * CLIP);
  ctx.clearRect(0, 0, w, h);
  const cols = m.query.length, gap = 4;
  const colW = (w - gap * (m.groups.length - 1)) / cols;
  const y = (v) => mid - Math.max(-CLIP, Math.min(CLIP, v)) * unit;
  ctx.strokeStyle = '#2e343c';
  ctx.beginPath(); ctx.moveTo(0, mid); ctx.lineTo(w, mid); ctx.stroke();
  ctx.font = '9px monospace';
  let x = 0;
  m.groups.forEach((g, gi) => {
    const x0 = x;
    const worst = g.cost / Math.max(1e-9, ...m.groups.map((o) => o.cost));
    ctx.fillStyle = `rgba(229,115,115,${(0.08 + 0.25 * worst).toFixed(3)})`;
    ctx.fillRect(x0, top, colW * g.dims, bottom - top);
    for (let c = g.first; c < g.first + g.dims; c++) {
      const bw = Math.max(1, colW / 2 - 1);
      ctx.fillStyle = '#4fc3f7';
      ctx.fillRect(x + 0.5, Math.min(mid, y(m.query[c])), bw, Math.abs(y(m.query[c]) - mid) || 1);
      ctx.fillStyle = '#ffb74d';
      ctx.fillRect(x + colW / 2, Math.min(mid, y(m.features[c])), bw, Math.abs(y(m.features[c]) - mid) || 1);
      x += colW;
    }
    ctx.fillStyle = '#8a94a0';
    ctx.fillText(shortGroup(g.name), x0 + 1, h - 4, colW * g.dims);
    x += gi < m.groups.length - 1 ? gap : 0;
  });
}

// "LeftFoot position" -> "LFoot p", "trajectory direction" -> "traj d".
function shortGroup(name) {
  const [what, ...rest] = name.split(' ');
  const kind = rest.join(' ');
  const head = what === 'trajectory' ? 'traj' : what.replace(/^Left/, 'L').replace(/^Right/, 'R');
  return `${head} ${kind ? kind[0] : ''}`;
}

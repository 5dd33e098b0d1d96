// debugger.js: the Debugger panel: the page's character's history
// (set_history, character_history) paused and scrubbed, the candidates of
// the search that decided the frame shown at the scrubbed tick as a
// sortable table (frame, range, total and per-group costs), and two
// controller parameters changed live (set_character_params), which the
// Character panel's character_state then shows. state.debug holds what it
// shows; noteStreamed keeps the last ticks the stream showed, so what the
// history says can be held against what was seen.
//
// While paused, ghosts.js draws the scrubbed tick in the view: the
// character then, the chosen and the selected candidate (a click on a row
// selects it; the runner-up until then) as ghosts beside it, the query's
// and the candidates' features as arrows. The Server panel (stats.js) and
// a recording replayed on the timeline (replay.js) are loaded from here.
//
// What it does not: debug any character but the page's own (a history is
// turned on by its owner).
import { $, app, fmt, quietly, state, toast } from './shared.js';
import { call } from './session.js';
import { clearGhosts, drawGhosts, ghostsDrawn, hideGhosts } from './ghosts.js';
import './stats.js';
import './replay.js';

const HISTORY_SECONDS = 10;
const CANDIDATES = 16;
const STREAMED_KEPT = 1200; // ticks of (tick -> frame) from the stream: 20 s at 60 Hz

const debug = state.debug;

// The stream's frame of each tick (character.js calls it for each pose).
export function noteStreamed(tick, frame) {
  debug.streamed[tick] = frame;
  debug.streamedTicks.push(tick);
  if (debug.streamedTicks.length > STREAMED_KEPT) delete debug.streamed[debug.streamedTicks.shift()];
}

// Nothing shown belongs to a character that is not there.
export function clearDebugger() {
  Object.assign(debug, { on: false, paused: false, history: null, index: -1, shown: null, rows: [], groups: [],
    selected: null, picked: false, streamed: {}, streamedTicks: [] });
  clearGhosts();
  $('history-info').textContent = '';
  $('candidates').querySelector('thead').innerHTML = '';
  $('candidates').querySelector('tbody').innerHTML = '';
  $('history-scrub').max = '0';
}

export async function historyOn() {
  if (!state.character.id) return toast('create a character first');
  const on = await call('set_history', { character: state.character.id, seconds: HISTORY_SECONDS,
    candidates: CANDIDATES });
  debug.on = true;
  $('history-info').textContent = `history on: ${on.capacity} ticks, ${(Number(on.bytes) / 1024).toFixed(0)} KiB`;
}

// Pauses: the last HISTORY_SECONDS of the history, the newest tick shown.
export async function pauseHistory() {
  if (!debug.on) await historyOn();
  const h = await call('character_history', { character: state.character.id, last_seconds: HISTORY_SECONDS,
    queries: true, poses: true });
  debug.history = h;
  debug.paused = true;
  debug.groups = h.groups.slice();
  $('history-scrub').max = String(h.ticks.length - 1);
  select(h.ticks.length - 1, true);
}

export function resumeHistory() {
  const wasPaused = debug.paused;
  debug.paused = false;
  debug.history = null;
  hideGhosts();
  if (wasPaused && state.character.id) $('follow').checked = true; // back on the live character
  $('history-info').textContent = debug.on ? 'live' : '';
}

// Shows the tick secondsBack seconds before the newest held (paused).
export function scrubTo(secondsBack) {
  const h = debug.history;
  if (!h) return;
  const want = Number(h.last_tick.toString()) - Math.round(secondsBack * h.tick_rate);
  let best = 0;
  h.ticks.forEach((t, i) => {
    if (Math.abs(Number(t.tick.toString()) - want) < Math.abs(Number(h.ticks[best].tick.toString()) - want)) best = i;
  });
  select(best);
}

const reasonNames = { 1: 'periodic', 2: 'replan', 3: 'range end' };

// The scrubbed tick, and the candidates of the search that decided its frame
// (its own, or the last one before it).
function select(index, frame = false) {
  const h = debug.history;
  debug.index = index;
  $('history-scrub').value = String(index);
  const t = h.ticks[index];
  let decided = index;
  while (decided > 0 && !h.ticks[decided].searched) decided--;
  const s = h.ticks[decided];
  const tick = Number(t.tick.toString());
  debug.shown = { tick, frame: t.frame, searched: t.searched, streamedFrame: debug.streamed[tick],
    searchTick: Number(s.tick.toString()), chosen: s.chosen, searchSearched: s.searched,
    query: s.searched ? Array.from(s.query) : [],
    settings: { current_frame: s.current_frame, transition_cost: s.transition_cost,
      ignore_range_end: s.ignore_range_end, ignore_surrounding: s.ignore_surrounding } };
  debug.rows = s.candidates.map((c, i) => ({ rank: i + 1, frame: c.frame, range: c.range_name, cost: c.cost,
    groups: Array.from(c.group_costs) }));
  // A candidate the user selected stays selected while the search shown
  // holds it; otherwise the runner-up is.
  if (!debug.picked || !debug.rows.some((r) => r.frame === debug.selected)) {
    debug.picked = false;
    debug.selected = debug.rows.length > 1 ? debug.rows[1].frame : null;
  }
  const back = (Number(h.last_tick.toString()) - tick) / h.tick_rate;
  $('history-info').textContent = `tick ${tick} (${fmt(back, 2)} s back): frame ${t.frame}` +
    `${debug.shown.streamedFrame !== undefined ? ` (streamed ${debug.shown.streamedFrame})` : ''}\n` +
    (s.searched ? `search at tick ${debug.shown.searchTick} (${s.reasons.map((r) => reasonNames[r]).join(', ')}): ` +
      `chose ${s.chosen}${s.transitioned ? ', transitioned' : ', stayed'}` : 'no search held before it');
  drawTable();
  quietly(showGhosts(frame));
}

// frame: the camera brought to them (on pausing).
function showGhosts(frame = false) {
  const h = debug.history;
  let decided = debug.index;
  while (decided > 0 && !h.ticks[decided].searched) decided--;
  return drawGhosts({ database: state.character.database, tick: h.ticks[debug.index], search: h.ticks[decided],
    selected: debug.selected, k: debug.rows.length, frame });
}

// A row of the table selected: its candidate drawn as the second ghost.
export function selectCandidate(frame) {
  if (!debug.history || !debug.rows.some((r) => r.frame === frame)) return;
  debug.selected = frame;
  debug.picked = true;
  drawTable();
  quietly(showGhosts());
}

// Columns: rank, frame, range, cost, then one per feature group.
function columnValue(row, column) {
  return column.startsWith('g') ? row.groups[Number(column.slice(1))] : row[column];
}

export function sortBy(column) {
  const sort = debug.sort;
  sort.ascending = sort.column === column ? !sort.ascending : true;
  sort.column = column;
  drawTable();
}

function drawTable() {
  const { column, ascending } = debug.sort;
  debug.rows.sort((a, b) => {
    const x = columnValue(a, column), y = columnValue(b, column);
    const order = typeof x === 'string' ? x.localeCompare(y) : x - y;
    return (ascending ? order : -order) || a.rank - b.rank;
  });
  // Short group labels (the full name in the tooltip): "LeftFoot position" -> "LFoot p".
  const short = (g) => g.replace(/^Left/, 'L').replace(/^Right/, 'R').replace('trajectory', 'traj')
    .replace(' position', ' p').replace(' velocity', ' v').replace(' direction', ' d');
  const heads = [['rank', '#', 'rank by cost'], ['frame', 'frame', 'database frame'], ['range', 'range', 'range'],
    ['cost', 'cost', 'total cost (transition cost included)'], ...debug.groups.map((g, i) => [`g${i}`, short(g), g])];
  const arrow = ascending ? ' \u25b2' : ' \u25bc';
  const thead = $('candidates').querySelector('thead');
  thead.innerHTML = `<tr>${heads.map(([k, label, title]) =>
    `<th data-column="${k}" title="${title}">${label}${k === column ? arrow : ''}</th>`).join('')}</tr>`;
  thead.querySelectorAll('th').forEach((th) => { th.onclick = () => sortBy(th.dataset.column); });
  $('candidates').querySelector('tbody').innerHTML = debug.rows.map((r) =>
    `<tr data-frame="${r.frame}" class="${r.frame === debug.shown.chosen ? 'on' : ''}` +
    `${r.frame === debug.selected ? ' picked' : ''}"><td>${r.rank}</td><td>${r.frame}</td>` +
    `<td>${r.range}</td><td>${fmt(r.cost, 4)}</td>${r.groups.map((g) => `<td>${fmt(g, 3)}</td>`).join('')}</tr>`)
    .join('');
  $('candidates').querySelectorAll('tbody tr').forEach((tr) => {
    tr.onclick = () => selectCandidate(Number(tr.dataset.frame));
  });
}

// The parameters in the inputs, from the next tick on.
export async function applyTuning() {
  if (!state.character.id) return toast('create a character first');
  const params = {};
  const halflife = Number($('tune-halflife').value), cost = Number($('tune-cost').value);
  if (halflife) params.inertialize_halflife = halflife;
  if (cost) params.transition_cost = cost;
  const answer = await call('set_character_params', { character: state.character.id, params });
  debug.applied = { inertialize_halflife: answer.params.inertialize_halflife,
    transition_cost: answer.params.transition_cost, tick: Number(answer.tick.toString()) };
}

$('history-on').onclick = () => quietly(historyOn());
$('history-pause').onclick = () => quietly(pauseHistory());
$('history-live').onclick = () => resumeHistory();
$('history-scrub').oninput = () => { if (debug.history) select(Number($('history-scrub').value)); };
$('tune-apply').onclick = () => quietly(applyTuning());
// main.js hands the page's actions to window.previewer; these are the debugger's own.
Object.assign(app, { selectCandidate, ghostsDrawn });

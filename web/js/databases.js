// databases.js: the Databases panel: the table of the server's databases
// (list_databases), the one selected described (describe_database: skeleton
// tree, ranges with tags, feature schema) and the skeletons of all of them
// (state.skeletons: parents, bone names, contact bones, frame rate), which
// the timeline, the character and the crowd draw with.
//
// The server pushes no event when a database is loaded, reloaded or
// unloaded: the page lists them again every DATABASES_POLL_MS while it is
// visible and connected. Playing a range is the timeline's (timeline.js);
// this only hands it the range chosen.
import { $, fmt, hex, state, toast } from './shared.js';
import { call, conn, proto } from './session.js';
import { selectRange } from './timeline.js';

// list_databases this often while the page is visible and connected: another
// client's load, reload or unload shows in the table (the server pushes none).
const DATABASES_POLL_MS = 2000;

// Lists the databases into the table and their skeletons (described
// again when their content changed, dropped when gone). On connecting the
// selected database is described (kept when it is still there, else
// "default" or the first); a refresh (another client loaded, reloaded or
// unloaded one) describes it again only when it changed or went away, and
// fails without a word when the connection went meanwhile.
export async function listDatabases(refresh = false) {
  const list = refresh ? await conn.call('list_databases', {}) : await call('list_databases', {});
  const before = new Map(state.databases.map((d) => [d.name, d.version]));
  state.databases = list.databases.map((d) => ({
    name: d.name, version: hex(d.version), frames: d.frames, bones: d.bones, frame_rate: d.frame_rate,
    feature_dims: d.feature_dims, ranges: d.ranges, memory_bytes: Number(d.memory_bytes.toString()),
  }));
  const same = (d) => before.get(d.name) === d.version;
  if (refresh && state.databases.length === before.size && state.databases.every(same)) return;
  const body = $('databases').querySelector('tbody');
  body.innerHTML = '';
  for (const d of state.databases) {
    const row = body.insertRow();
    row.innerHTML = `<td>${d.name}</td><td>${d.frames}</td><td>${d.bones}</td><td>${d.frame_rate}</td>` +
      `<td>${d.feature_dims}</td><td>${d.ranges}</td><td>${(d.memory_bytes / 1048576).toFixed(1)}</td>`;
    row.title = `version ${d.version}`;
    row.dataset.name = d.name;
    row.onclick = () => describe(d.name);
  }
  for (const name of Object.keys(state.skeletons)) {
    if (!state.databases.some((d) => d.name === name)) delete state.skeletons[name];
  }
  for (const d of state.databases) {
    if (!same(d) || !state.skeletons[d.name]) await loadSkeleton(d.name, refresh).catch(() => {});
  }
  listed = conn;
  const selected = state.databases.find((d) => d.name === state.database);
  if (refresh && selected && same(selected) && state.skeletons[selected.name]) {
    markSelected();
  } else if (state.databases.length) {
    const name = selected && state.skeletons[selected.name] ? selected.name
      : state.databases.some((d) => d.name === 'default') ? 'default' : state.databases[0].name;
    await describe(name);
  } else {
    state.database = null;
    state.describe = null;
    $('describe').classList.add('hidden');
  }
}

// list_databases again (DATABASES_POLL_MS), one at a time, while the page
// is visible and connected (once the connection's first list is in), and
// once the page is shown again.
let refreshing = null;
let listed = null; // the connection whose databases were listed
function refreshDatabases() {
  if (refreshing || !conn || !state.connected || listed !== conn || document.visibilityState !== 'visible') return;
  refreshing = listDatabases(true)
    .catch((e) => { if (state.connected) toast(e.message); })
    .finally(() => { refreshing = null; });
}
setInterval(refreshDatabases, DATABASES_POLL_MS);
document.addEventListener('visibilitychange', refreshDatabases);

// quiet: a database unloaded meanwhile is no failure of the page's (a refresh, a crowd's).
async function loadSkeleton(name, quiet = false) {
  const d = quiet ? await conn.call('describe_database', { name }) : await call('describe_database', { name });
  state.skeletons[name] = {
    describe: d, parents: d.bones.map((b) => b.parent), names: d.bones.map((b) => b.name),
    contactBones: d.contact_bones, frameRate: d.summary.frame_rate,
  };
  return d;
}

// The skeleton of database name, described when the page has none (one
// request per name however many ask); null when it cannot be described.
const skeletonsAsked = new Map();
export async function skeletonOf(name) {
  if (state.skeletons[name]) return state.skeletons[name];
  if (!skeletonsAsked.has(name)) {
    skeletonsAsked.set(name, loadSkeleton(name, true).catch(() => null).finally(() => skeletonsAsked.delete(name)));
  }
  await skeletonsAsked.get(name);
  return state.skeletons[name] || null;
}

function markSelected() {
  for (const tr of $('databases').querySelectorAll('tbody tr')) tr.classList.toggle('on', tr.dataset.name === state.database);
}

// Describes database name into the panel (state.describe) and shows its
// first range on the timeline, paused.
export async function describe(name) {
  const d = await loadSkeleton(name);
  state.database = name;
  state.describe = {
    name, bones: d.bones.map((b) => ({ name: b.name, parent: b.parent })),
    ranges: d.ranges.map((r) => ({ name: r.name, start: r.start, stop: r.stop, tags: r.tags })),
    features: d.features.map((f) => ({
      kind: proto.FeatureKind.valuesById[f.kind], bone: f.bone, weight: f.weight, first_column: f.first_column,
      dims: f.dims, frame_offsets: f.frame_offsets, halflife: f.halflife,
    })),
    contact_bones: d.contact_bones,
  };
  markSelected();
  $('describe').classList.remove('hidden');
  const s = d.summary;
  $('db-summary').textContent = `${s.name}  version ${hex(s.version)}\n${s.frames} frames at ${s.frame_rate} Hz` +
    ` (${(s.frames / s.frame_rate).toFixed(1)} s), ${s.bones} bones, ${s.feature_dims} feature dims`;
  const tree = $('skeleton');
  tree.innerHTML = '';
  const depth = (b) => (b < 0 ? -1 : 1 + depth(d.bones[b].parent));
  d.bones.forEach((b, i) => {
    const li = document.createElement('li');
    const contact = d.contact_bones.includes(b.name);
    li.textContent = `${String(i).padStart(2)} ${'  '.repeat(depth(i))}${b.name}${contact ? '  (contact)' : ''}`;
    if (contact) li.className = 'contact';
    tree.appendChild(li);
  });
  const ranges = $('ranges').querySelector('tbody');
  ranges.innerHTML = '';
  d.ranges.forEach((r, i) => {
    const row = ranges.insertRow();
    row.innerHTML = `<td>${i}</td><td>${r.name}</td><td>${r.start}-${r.stop - 1}</td>` +
      `<td>${r.tags.map((t) => `<span class="tag">${t}</span>`).join('')}</td>`;
    row.onclick = () => { $('range').value = String(i); selectRange(i, true); };
  });
  const features = $('features').querySelector('tbody');
  features.innerHTML = '';
  for (const f of d.features) {
    const kind = proto.FeatureKind.valuesById[f.kind].replace('FEATURE_', '').toLowerCase().replace('_', ' ');
    const row = features.insertRow();
    const norm = f.offset.map((o, i) => `(${fmt(o, 2)}/${fmt(f.scale[i], 2)})`).slice(0, 3).join(' ');
    row.innerHTML = `<td>${f.bone ? `${f.bone} ` : ''}${kind}${f.halflife ? ` h=${f.halflife}` : ''}</td>` +
      `<td>${fmt(f.weight, 2)}</td><td>${f.first_column}+${f.dims}</td>` +
      `<td>${f.frame_offsets.join(',')}</td><td title="offset/scale per column">${norm}${f.offset.length > 3 ? ' ...' : ''}</td>`;
  }
  // What a frame of one character costs on this skeleton (docs/protocol.md, Streams).
  const n = d.bones.length;
  $('encoding').options[0].textContent = `float (${28 * n} B/char)`;
  $('encoding').options[1].textContent = `quantized (${12 + 7 * n + 6 * (n - 1)} B/char)`;
  const select = $('range');
  select.innerHTML = d.ranges.map((r, i) => `<option value="${i}">${i}: ${r.name} (${r.stop - r.start})</option>`).join('');
  await selectRange(0, false);
}

for (const b of document.querySelectorAll('.tabs button')) {
  b.onclick = () => {
    for (const other of document.querySelectorAll('.tabs button')) other.classList.toggle('on', other === b);
    for (const t of document.querySelectorAll('.tab')) t.classList.toggle('hidden', t.id !== `tab-${b.dataset.tab}`);
  };
}

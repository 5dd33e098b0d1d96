// debugger_test.mjs: the previewer's debugger views (issue 36) in headless
// Chromium (Debian's), driven by puppeteer-core, against a real server
// through the real websockify bridge. Started by
// tests/interop/test_previewer_debugger.py, which starts both and records a
// character with animctl record first:
//   node debugger_test.mjs URL SHOT_DIR RECORDING   (RECORDING: the path without .glb/.bvh/.jsonl;
//                                                    env NPM_MODULES: the node_modules with puppeteer-core)
// Checks read the page's state and what it drew (read back from the three.js
// objects: a ghost's joints from its instance matrices, an arrow's tip from
// the arrow), held against the server's own answers (pose, search,
// server_stats, character_history) and against the recording's JSON lines;
// the screenshots are for people. Waits are bounds on waiting, never
// pass/fail timings.
import fs from 'node:fs';
import path from 'node:path';
import { ok, report, sleep, startPage } from './page.mjs';

const [url, shots, recording] = process.argv.slice(2);
const GHOST_M = 1e-4; // a ghost's joints against its database frame's pose (rigid placement, float32)
const ARROW_M = 1e-3; // a feature arrow's tip against the ghost joint it should end on (denormalized float32 features)
const QUERY_TOLERANCE = 1e-3; // the query given back by its arrows (normalized units, relative + 1e-4)
const REPLAY_M = 1e-3; // a replayed bone against the stream's world position (the issue's 1 mm)

const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const at = (flat, b) => [flat[3 * b], flat[3 * b + 1], flat[3 * b + 2]];
// v rotated by the inverse of q (w, x, y, z).
function unrotate(q, v) {
  const [w, x, y, z] = [q[0], -q[1], -q[2], -q[3]];
  const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

const { browser, page, pageErrors, waitFor } = await startPage(shots, 'debugger-failed.png');
try {
  const get = (fn, ...args) => page.evaluate(fn, ...args);
  // A request from the page's own connection (the server's answer, not the page's view of it).
  const ask = (kind, body) => get(async (k, b) => {
    const { conn } = await import(new URL('js/session.js', location.href).href);
    const answer = await conn.call(k, b);
    return JSON.parse(JSON.stringify(answer, (key, v) => (typeof v === 'bigint' || (v && v.high !== undefined &&
      v.low !== undefined) ? v.toString() : v)));
  }, kind, body);

  await page.goto(url);
  await waitFor(() => window.previewer && window.previewer.state.describe && window.previewer.state.connected);

  // 2. The debugger's ghosts and arrows: the page's character created, (1.) its history
  // turned on, walked and turned (set_inputs from the page's connection:
  // what the page's keys send, without a key press), paused, scrubbed back.
  await page.click('#create');
  await waitFor(() => window.previewer.state.character.frames > 30 && window.previewer.state.character.states > 3);

  // 1. The Server panel (a character walking: the server ticks): server_stats polled at most once a
  // second, charted;
  // the chart's last values are those of the server's figures (held against
  // a server_stats call made right after the poll).
  await waitFor(() => window.previewer.state.stats.polls >= 3);
  const polls0 = await get(() => window.previewer.state.stats.polls);
  await sleep(3000);
  const polls1 = await get(() => window.previewer.state.stats.polls);
  ok(polls1 - polls0 >= 1 && polls1 - polls0 <= 4, `server_stats polled ${polls1 - polls0} times in 3 s (at most one a second)`);
  const fresh = await get(async () => {
    const p = window.previewer;
    // The panel's next poll, then the server asked at once.
    const polls = p.state.stats.polls;
    while (p.state.stats.polls === polls) await new Promise((r) => setTimeout(r, 5));
    const samples = p.state.stats.samples.slice();
    const drawn = JSON.parse(JSON.stringify(p.state.stats.drawn));
    const sample = samples[samples.length - 1];
    const { conn } = await import(new URL('js/session.js', location.href).href);
    const r = await conn.call('server_stats', {});
    return { sample, before: samples[samples.length - 2], drawn,
      now: { uptime_us: Number(r.uptime_us.toString()), ticks: Number(r.ticks.toString()), connections: r.connections,
        ticks_late: Number(r.ticks_late.toString()), frames_dropped: Number(r.frames_dropped.toString()),
        tick_rate: r.tick_rate } };
  });
  const { sample, before, drawn, now } = fresh;
  const elapsed = (now.uptime_us - sample.uptime_us) / 1e6;
  ok(now.ticks >= sample.ticks && now.ticks - sample.ticks <= Math.ceil(elapsed * now.tick_rate) + 2 &&
    now.ticks_late >= sample.ticks_late && now.frames_dropped >= sample.frames_dropped,
    `the chart's last sample is the server's: ${sample.ticks} ticks, then ${now.ticks} from server_stats ` +
    `${(elapsed * 1000).toFixed(0)} ms later`);
  const between = (sample.uptime_us - before.uptime_us) / 1e6;
  const tickRate = (sample.ticks - before.ticks) / between;
  // A loaded server folds deadlines it missed into one tick (ticks_skipped):
  // ticks and skipped deadlines together keep to the configured rate.
  const deadlineRate = (sample.ticks + sample.ticks_skipped - before.ticks - before.ticks_skipped) / between;
  ok(drawn.connections === now.connections && drawn.connections === sample.connections &&
    Math.abs(drawn.ticks - tickRate) < 1e-6 && deadlineRate > 0.5 * now.tick_rate && deadlineRate < 1.5 * now.tick_rate,
    `the chart drew ${drawn.connections} connection(s) (server_stats: ${now.connections}) and ` +
    `${drawn.ticks.toFixed(1)} ticks/s, the server's (${deadlineRate.toFixed(1)} deadlines/s with those skipped; ` +
    `configured ${now.tick_rate} Hz)`);
  ok(Array.isArray(drawn.work) && drawn.work[0] === sample.tick_work_p50_us && drawn.work[1] === sample.tick_work_p99_us,
    `tick work drawn: p50 ${drawn.work[0]} us, p99 ${drawn.work[1]} us`);

  await page.click('#history-on');
  await waitFor(() => window.previewer.state.debug.on);
  const id = await get(() => window.previewer.state.character.id);
  await ask('set_inputs', { inputs: [{ character: id, stick: { x: 0, z: 1, camera_azimuth: 0, strafe: false } }] });
  await sleep(1500);
  await ask('set_inputs', { inputs: [{ character: id, stick: { x: 0.95, z: 0.3, camera_azimuth: 0, strafe: false } }] });
  await sleep(1500);
  await page.click('#history-pause');
  await waitFor(() => window.previewer.state.debug.paused && window.previewer.state.debug.rows.length > 3 &&
    window.previewer.state.debug.ghosts);
  await get(() => window.previewer.scrubTo(1));
  await waitFor(() => { const d = window.previewer.state.debug; return d.ghosts && d.ghosts.tick === d.shown.tick; });
  let s = await get(() => JSON.parse(JSON.stringify({ debug: { ...window.previewer.state.debug, history: null },
    names: window.previewer.state.skeletons[window.previewer.state.character.database].names,
    features: window.previewer.state.skeletons[window.previewer.state.character.database].describe.features,
    database: window.previewer.state.character.database })));
  const names = s.names;
  const g = s.debug.ghosts;
  ok(g.searchTick === s.debug.shown.searchTick && g.chosen.frame === s.debug.shown.chosen &&
    g.selected.frame === s.debug.rows.find((r) => r.rank === 2).frame,
    `scrubbed 1 s back (tick ${g.tick}, decided by the search at tick ${g.searchTick}): ghosts of the chosen frame ` +
    `${g.chosen.frame} and the runner-up ${g.selected.frame}`);

  // A ghost is its database frame's pose, moved rigidly beside the
  // character: each joint's height over bone 0 and distance from it on the
  // ground as in the pose request's global positions; its bone 0
  // GHOST_SIDE_M to the side of the character's root at the search tick.
  const checkGhost = async (which, frame, joints, arrows) => {
    const pose = (await ask('pose', { database: s.database, frame, count: 1,
      options: { global: true, velocities: true } })).poses[0];
    let worst = 0, worstBone = '';
    for (let b = 0; b < names.length; b++) {
      const d = at(pose.global_positions, b), d0 = at(pose.global_positions, 0), j = joints[b], j0 = joints[0];
      const e = Math.max(Math.abs((j[1] - j0[1]) - (d[1] - d0[1])),
        Math.abs(Math.hypot(j[0] - j0[0], j[2] - j0[2]) - Math.hypot(d[0] - d0[0], d[2] - d0[2])));
      if (e >= worst) { worst = e; worstBone = names[b]; }
    }
    const side = Math.hypot(joints[0][0] - g.root[0], joints[0][2] - g.root[2]);
    ok(worst < GHOST_M && Math.abs(side - g.side) < GHOST_M,
      `the ${which} ghost is frame ${frame}'s pose (worst ${worstBone}, ${(worst * 1000).toFixed(4)} mm off), ` +
      `${side.toFixed(3)} m beside the character`);
    // Its feature arrows (search's include_features, denormalized): each
    // position arrow ends on the ghost's joint of that bone, each velocity
    // arrow is VELOCITY_ARROW_S of the bone's velocity in the pose request.
    let worstTip = 0, tipBone = '', worstSpeed = 0, speedBone = '';
    const positions = arrows.arrows.filter((a) => a.kind === 'position');
    const velocities = arrows.arrows.filter((a) => a.kind === 'velocity');
    for (const a of positions) {
      const e = dist(a.tip, joints[names.indexOf(a.bone)]);
      if (e >= worstTip) { worstTip = e; tipBone = a.bone; }
    }
    for (const a of velocities) {
      const b = names.indexOf(a.bone);
      const v = at(pose.global_velocities, b);
      const e = Math.abs(dist(a.tip, a.base) / 0.2 - Math.hypot(...v)) * 0.2;
      if (e >= worstSpeed) { worstSpeed = e; speedBone = a.bone; }
    }
    ok(positions.length > 0 && worstTip < ARROW_M && velocities.length > 0 && worstSpeed < ARROW_M,
      `the ${which} ghost's ${positions.length} position arrows end on its joints (worst ${tipBone}, ` +
      `${(worstTip * 1000).toFixed(4)} mm), its ${velocities.length} velocity arrows are its bones' velocities ` +
      `(worst ${speedBone}, ${(worstSpeed * 1000).toFixed(4)} mm at the tip); ${arrows.points.length} trajectory points`);
  };
  let view = await get(() => window.previewer.ghostsDrawn());
  await checkGhost('chosen', g.chosen.frame, view.chosen, view.chosenArrows);
  await checkGhost('runner-up', g.selected.frame, view.selected, view.selectedArrows);

  // The query's arrows, at the character's root then, give the recorded query back.
  const query = s.debug.shown.query;
  let worstQuery = 0, queryWhat = '', checked = 0;
  for (const a of view.queryArrows.arrows) {
    if (a.kind !== 'position' && a.kind !== 'velocity') continue;
    const group = s.features[a.group];
    const raw = unrotate(g.rotation, a.kind === 'position' ? [a.tip[0] - g.root[0], a.tip[1] - g.root[1],
      a.tip[2] - g.root[2]] : [(a.tip[0] - a.base[0]) / 0.2, (a.tip[1] - a.base[1]) / 0.2, (a.tip[2] - a.base[2]) / 0.2]);
    for (let j = 0; j < 3; j++) {
      const want = query[group.first_column + j];
      const e = Math.abs((raw[j] - group.offset[j]) / group.scale[j] - want) / (Math.abs(want) + 0.1);
      checked++;
      if (e >= worstQuery) { worstQuery = e; queryWhat = `${a.bone} ${a.kind}`; }
    }
  }
  for (const p of view.queryArrows.points) {
    const group = s.features[p.group];
    const raw = unrotate(g.rotation, [p.at[0] - g.root[0], 0, p.at[2] - g.root[2]]);
    [raw[0], raw[2]].forEach((v, j) => {
      const want = query[group.first_column + 2 * p.sample + j];
      const e = Math.abs((v - group.offset[2 * p.sample + j]) / group.scale[2 * p.sample + j] - want) / (Math.abs(want) + 0.1);
      checked++;
      if (e >= worstQuery) { worstQuery = e; queryWhat = `trajectory point ${p.sample}`; }
    });
  }
  ok(checked > 12 && worstQuery < QUERY_TOLERANCE, `the query's arrows and trajectory points give its ${checked} ` +
    `position, velocity and trajectory columns back (worst ${queryWhat}, ${worstQuery.toExponential(2)})`);
  // The character then: its root where the character_history answer the
  // page paused on puts it at the scrubbed tick (the ring has moved on since).
  const r = await get((tick) => {
    const t = window.previewer.state.debug.history.ticks.find((x) => Number(x.tick.toString()) === tick);
    return [t.root_position.x, t.root_position.y, t.root_position.z];
  }, g.tick);
  ok(dist(view.then[0], r) < GHOST_M && view.then.length === names.length,
    `the character then (tick ${g.tick}) drawn where character_history puts its root`);

  // A row of the table selected: its candidate becomes the second ghost.
  const pick = s.debug.rows.find((row) => row.rank === 4);
  await page.click(`#candidates tbody tr[data-frame="${pick.frame}"]`);
  await waitFor((f) => { const gh = window.previewer.state.debug.ghosts; return gh && gh.selected && gh.selected.frame === f; },
    pick.frame);
  view = await get(() => window.previewer.ghostsDrawn());
  ok(await page.$eval('#candidates tbody tr.picked', (tr) => Number(tr.dataset.frame)) === pick.frame,
    `a click on candidate 4 (frame ${pick.frame}) selects its row`);
  await checkGhost('selected', pick.frame, view.selected, view.selectedArrows);
  ok(!(await page.$eval('#follow', (e) => e.checked)), 'paused: the camera left the live character for the ghosts');
  await sleep(800);
  await page.screenshot({ path: path.join(shots, 'previewer-ghosts.png') });
  await page.click('#history-live');
  ok(await get(() => window.previewer.ghostsDrawn() === null) && await page.$eval('#follow', (e) => e.checked),
    'live again: the ghosts are gone, the camera follows the character');

  // 3. A recording replayed: the .glb, .bvh and .gltf (+ .bin) animctl record wrote, picked in the
  // Recording panel, played on the timeline; each bone at a frame where the
  // stream put it (the recording's JSON lines: frame i is tick first + i).
  const lines = fs.readFileSync(`${recording}.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const header = lines[0];
  const streamed = lines.slice(1).filter((l) => l.type === 'frame' && l.poses.length);
  const firstTick = streamed[0].tick;
  const frameCount = streamed[streamed.length - 1].tick - firstTick + 1;
  await page.click('#destroy');
  for (const [format, file, ...more] of [['gltf', `${recording}.glb`], ['bvh', `${recording}.bvh`],
    ['gltf', `${recording}.gltf`, `${recording}.bin`]]) {
    const opened = await get(() => window.previewer.state.replay.opened);
    const input = await page.$('#recording-file');
    await input.uploadFile(file, ...more);
    await waitFor((n) => window.previewer.state.replay.opened > n, opened);
    const rs = await get(() => JSON.parse(JSON.stringify({ replay: window.previewer.state.replay,
      playback: window.previewer.state.playback })));
    ok(rs.replay.format === format && rs.replay.frames === frameCount &&
      header.bones.every((b) => rs.replay.names.includes(b)) && rs.playback.recording === path.basename(file) &&
      rs.playback.playing,
      `${path.basename(file)} opened: ${rs.replay.frames} frames of ${rs.replay.bones} bones (the stream's ` +
      `${frameCount} ticks, its ${header.bones.length} bones by name), playing on the timeline`);
    let worst = 0, worstWhere = '';
    const picks = [streamed[0], streamed[Math.floor(streamed.length / 2)], streamed[streamed.length - 1]];
    for (const line of picks) {
      const frame = line.tick - firstTick;
      const joints = await get((f) => window.previewer.replayJoints(f), frame);
      const gp = line.poses[0].global_positions;
      header.bones.forEach((name, b) => {
        const e = dist(at(joints, rs.replay.names.indexOf(name)), at(gp, b));
        if (e >= worst) { worst = e; worstWhere = `${name} at frame ${frame}`; }
      });
    }
    ok(worst < REPLAY_M, `replayed ${path.basename(file)}: every bone where the stream put it at frames ` +
      `${picks.map((l) => l.tick - firstTick).join(', ')} (worst ${worstWhere}, ${(worst * 1000).toFixed(4)} mm)`);
    // The timeline drives it: paused, scrubbed to the middle frame, the clip's root is that frame's.
    await page.click('#play');
    const mid = picks[1].tick - firstTick;
    await page.$eval('#scrub', (el, f) => { el.value = String(f); el.dispatchEvent(new Event('input')); }, mid);
    const pb = await get(() => JSON.parse(JSON.stringify(window.previewer.state.playback)));
    const midJoints = await get((f) => window.previewer.replayJoints(f), mid);
    ok(!pb.playing && pb.frame === mid && dist(pb.root, at(midJoints, 0)) < 1e-6,
      `the timeline pauses it and scrubs it: frame ${pb.frame} shown, its root where the recording has it`);
    if (file.endsWith('.glb')) {
      await get(() => {
        const p = window.previewer.state.playback.root;
        window.previewer.viewer.frame(p[0], 0.9, p[2], 4);
        document.getElementById('replay-info').scrollIntoView({ block: 'end' }); // the Server and Recording panels
      });
      await sleep(600);
      await page.screenshot({ path: path.join(shots, 'previewer-replay.png') });
    }
  }

  ok(pageErrors.length === 0, `no page errors${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`);
  const errors = await get(() => window.previewer.state.errors);
  ok(errors.length === 0, `no request failed${errors.length ? `: ${errors.join('; ')}` : ''}`);
} finally {
  await browser.close();
}
report('previewer debugger');

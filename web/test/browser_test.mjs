// browser_test.mjs: the previewer in headless Chromium (Debian's), driven by
// puppeteer-core, against a real server through the real websockify bridge.
// Started by tests/interop/test_previewer.py, which starts the server (with an
// auth token and a data directory holding "reordered": the default
// database's motion with its skeleton's bones in another order, as many of
// them), the bridge and a crowd, and passes:
//   node browser_test.mjs URL SHOT_DIR CROWD_IDS   (env NPM_MODULES: the node_modules with puppeteer-core)
// It asks the harness by a line on stdout: "HARNESS load" (another client
// loads "reordered" and creates three characters walking on it: their ids
// come back), "HARNESS unload" (they are destroyed and the database
// unloaded), "HARNESS kill" / "HARNESS start" (the server killed, started
// again on its port); the harness answers with a line on stdin once done:
// "done", then what it has to say.
// Checks read the page's state (window.previewer.state), not pixels; the
// screenshots are for people. Waits are bounds on waiting, never pass/fail
// timings; the two-second key presses are the input itself.
import path from 'node:path';
import readline from 'node:readline';
import { WAIT_MS, ok, report, sleep, startPage } from './page.mjs';

const [url, shots, crowdArg] = process.argv.slice(2);
const crowdIds = crowdArg.split(',');
const ANGLE_DEG = 30; // moved within this of the asked direction
const MIN_DISTANCE_M = 0.8; // in two seconds at full stick (1.75 m/s once the springs catch up)
const COST_TOLERANCE = 1e-3; // a group's cost from the two vectors against the server's split (relative, + 1e-6)
const SWITCH_M_PER_TICK = 0.05; // a root across the encoding switch (the crowd walks 0.9 m/s: 1.5 cm a tick)
const LOCK_SLIP_M = 0.02; // median distance of a locked foot's streamed toe from where it is held
const MISSING_ID = '999'; // slot 998 (the low half of an id is slot + 1): the crowd here is far smaller

const answers = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function harness(what) {
  console.log(`HARNESS ${what}`);
  const answer = await answers.next();
  if (answer.done) throw new Error(`the harness did not answer ${what}`);
  return answer.value.replace(/^done ?/, '');
}
const angle = (a, b) => (Math.acos(Math.max(-1, Math.min(1, (a[0] * b[0] + a[1] * b[1]) /
  (Math.hypot(...a) * Math.hypot(...b) || 1)))) * 180) / Math.PI;

const { browser, page, pageErrors, waitFor } = await startPage(shots, 'previewer-failed.png');
try {
  // A gamepad the page can poll (navigator.getGamepads), its sticks set by the test.
  await page.evaluateOnNewDocument(() => {
    window.testPad = { id: 'test pad (simulated)', connected: true, axes: [0, 0, 0, 0],
      buttons: Array.from({ length: 17 }, () => ({ pressed: false, value: 0 })) };
    Object.defineProperty(Navigator.prototype, 'getGamepads', { value: () => [window.testPad], configurable: true });
  });
  const state = () => page.evaluate(() => JSON.parse(JSON.stringify(window.previewer.state, (k, v) =>
    (k === 'rig' || k === 'trail' || k === 'skeleton' || k === 'history' || k === 'streamed' || k === 'streamedTicks'
      ? undefined : typeof v === 'bigint' ? v.toString() : v))));
  // 0. A wrong token: the hello is refused, the status says why (the bridge's close said only "Target
  // closed") and the page does not knock again.
  const wrong = await browser.newPage();
  await wrong.goto(url.replace(/token=[^&]*/, 'token=wrong'));
  await wrong.waitForFunction(() => window.previewer && window.previewer.state.reconnect.refused &&
    document.getElementById('status').textContent.startsWith('refused'), { timeout: WAIT_MS, polling: 50 });
  await sleep(1200); // longer than the first reconnection delay
  const refusedState = await wrong.evaluate(() => ({ ...window.previewer.state.reconnect, timer: undefined,
    status: document.getElementById('status').textContent }));
  ok(refusedState.status.includes('wrong token') && !refusedState.wanted && refusedState.attempts === 0,
    `a wrong token: "${refusedState.status}", not tried again`);
  await wrong.close();

  // 1. Connect (hello with the token from the URL), list and describe the default database.
  await page.goto(url);
  await waitFor(() => window.previewer && window.previewer.state.describe && window.previewer.state.playback.framesShown > 0);
  let s = await state();
  ok(s.connected && s.server.protocol_version === 1, `connected through the bridge with the auth token (server ${s.server.server_version})`);
  ok(s.databases.some((d) => d.name === 'default'), `list_databases: ${s.databases.map((d) => d.name).join(', ')}`);
  const db = s.databases.find((d) => d.name === 'default');
  const rows = await page.$$eval('#databases tbody tr', (trs) => trs.map((tr) => tr.innerText));
  ok(rows.some((r) => r.startsWith('default')), 'the databases table lists default');
  ok(s.describe.bones.length === db.bones && s.describe.ranges.length === db.ranges && s.describe.features.length > 0,
    `describe_database: ${s.describe.bones.length} bones, ${s.describe.ranges.length} ranges, ${s.describe.features.length} feature groups`);
  const skeletonLines = await page.$$eval('#skeleton li', (lis) => lis.length);
  ok(skeletonLines === db.bones, 'the skeleton tree shows every bone');

  // 1b. Another client loads a database: the table shows it by itself (the
  // server pushes no event: the page lists them again while it is visible),
  // the selection stays.
  const tableNames = () => page.$$eval('#databases tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
  ok((await tableNames()).join() === 'default', 'before: the table lists default alone');
  const loadedAt = Date.now();
  const otherIds = (await harness('load')).split(',');
  // The table is drawn first, the selection marked once the new skeleton is learned: wait for both.
  await waitFor(() => [...document.querySelectorAll('#databases tbody tr')].some((tr) => tr.cells[0].textContent === 'reordered') &&
    document.querySelector('#databases tbody tr.on'));
  s = await state();
  const selectedRow = await page.$eval('#databases tbody tr.on', (tr) => tr.cells[0].textContent);
  ok((await tableNames()).join() === 'default,reordered' && s.database === 'default' && selectedRow === 'default',
    `another client (animctl) loaded "reordered": the table shows it within ${((Date.now() - loadedAt) / 1000).toFixed(1)} s, ` +
    'default still selected');
  const skeletons = await page.evaluate(() => Object.fromEntries(Object.entries(window.previewer.state.skeletons)
    .map(([name, sk]) => [name, { parents: sk.parents, names: sk.names }])));
  ok(skeletons.reordered && skeletons.reordered.parents.length === skeletons.default.parents.length &&
    skeletons.reordered.parents.join() !== skeletons.default.parents.join(),
    `"reordered" has as many bones as default (${skeletons.default.parents.length}), in another order`);

  // 2. Play a range from the ranges table; pause, step, speed.
  await page.click('.tabs button[data-tab="ranges"]');
  const index = s.describe.ranges.findIndex((r) => r.tags.includes('walk') || r.tags.includes('run'));
  const chosen = index >= 0 ? index : 1;
  await page.click(`#ranges tbody tr:nth-child(${chosen + 1})`);
  await waitFor((i) => window.previewer.state.playback.range === i && window.previewer.state.playback.playing, chosen);
  s = await state();
  const shown0 = s.playback.framesShown, root0 = s.playback.root;
  await waitFor((n) => window.previewer.state.playback.framesShown > n + 40, shown0);
  s = await state();
  const range = s.describe.ranges[chosen];
  ok(s.playback.frame >= range.start && s.playback.frame < range.stop,
    `playing range ${chosen} (${range.name}, tags ${range.tags.join(' ')}): frame ${s.playback.frame} in [${range.start}, ${range.stop})`);
  ok(Math.hypot(s.playback.root[0] - root0[0], s.playback.root[2] - root0[2]) > 0.05, 'the clip skeleton moves as it plays');
  await page.screenshot({ path: path.join(shots, 'previewer-playback.png') });
  await page.click('#play');
  s = await state();
  const paused = s.playback.frame;
  await sleep(300);
  s = await state();
  ok(!s.playback.playing && s.playback.frame === paused, `pause holds frame ${paused}`);
  // Steps stay inside the range (the pause may land on its first or last frame).
  const inRange = (f) => Math.min(Math.max(f, range.start), range.stop - 1);
  await page.click('#step-fwd');
  s = await state();
  const forward = inRange(paused + 1);
  ok(s.playback.frame === forward, `step forward from ${paused}: frame ${s.playback.frame}, want ${forward}`);
  await page.click('#step-back');
  await page.click('#step-back');
  s = await state();
  const stepped = inRange(forward - 2);
  ok(s.playback.frame === stepped, `step back twice: frame ${s.playback.frame}, want ${stepped}`);
  await page.select('#speed', '2');
  s = await state();
  ok(s.playback.speed === 2, 'speed 2');

  // Steps 3b and 3c, run after step 3 (below).
  const debuggerStep = async () => {
    let s;
    // 3b. The debugger: the character's history on, three seconds of walking and turning, paused; scrubbed
    // two seconds back, the tick's frame is what the stream showed then and what a history request of that
    // tick says; the candidates table is a search of the recorded query with the recorded settings, and
    // sorts by a column; a half-life set from the panel is the one character_state reports.
    await page.click('#history-on');
    await waitFor(() => window.previewer.state.debug.on);
    // W taken by the page (its stick sent): a key pressed while the page
    // still had the focus elsewhere is pressed again.
    for (let attempt = 1; ; attempt++) {
      await page.mouse.click(800, 450);
      await page.keyboard.down('KeyW');
      try {
        await page.waitForFunction(() => Math.hypot(...window.previewer.state.input.stick) > 0.5, { timeout: 3000, polling: 50 });
        break;
      } catch (e) {
        await page.keyboard.up('KeyW');
        if (attempt === 3) throw new Error(`the page took no W: ${e.message}`);
      }
    }
    await sleep(1500);
    await page.keyboard.down('KeyD');
    await sleep(1500);
    await page.keyboard.up('KeyD');
    await page.keyboard.up('KeyW');
    await page.click('#history-pause');
    await waitFor(() => window.previewer.state.debug.paused && window.previewer.state.debug.rows.length > 0);
    await page.evaluate(() => window.previewer.scrubTo(2));
    s = await state();
    const shown = s.debug.shown;
    ok(shown.streamedFrame !== undefined && shown.frame === shown.streamedFrame,
      `scrubbed 2 s back to tick ${shown.tick}: frame ${shown.frame} shown, the stream showed ${shown.streamedFrame}`);
    const probe = await page.evaluate(async (sh) => {
      const { conn } = await import(new URL('js/session.js', location.href).href);
      const h = await conn.call('character_history', { character: window.previewer.state.character.id,
        from_tick: sh.searchTick, to_tick: sh.tick });
      const decided = h.ticks[0];
      const found = await conn.call('search', { database: window.previewer.state.character.database, query: {
        features: sh.query, k: window.previewer.state.debug.rows.length, current_frame: sh.settings.current_frame >= 0
          ? { frame: sh.settings.current_frame } : null, transition_cost: sh.settings.transition_cost,
        ignore_range_end: sh.settings.ignore_range_end, ignore_surrounding: sh.settings.ignore_surrounding } });
      return { chosen: decided.chosen, frame: h.ticks[h.ticks.length - 1].frame,
        matches: found.result.matches.map((m) => [m.frame, m.cost]) };
    }, shown);
    ok(probe.chosen === shown.chosen && probe.frame === shown.frame,
      `the then-chosen frame ${shown.chosen} (search at tick ${shown.searchTick}) is what character_history returns`);
    const table = s.debug.rows.map((r) => [r.frame, r.cost]);
    ok(table.length > 1 && JSON.stringify(table) === JSON.stringify(probe.matches),
      `the candidates table (${table.length} rows) is a search of the recorded query and settings, frames and costs`);
    const column = `g${s.debug.groups.length - 2}`; // the trajectory position group
    const cells = () => page.$$eval('#candidates tbody tr', (trs, c) =>
      trs.map((tr) => Number(tr.cells[4 + Number(c.slice(1))].textContent)), column);
    await page.click(`#candidates th[data-column="${column}"]`);
    const up = await cells();
    await page.click(`#candidates th[data-column="${column}"]`);
    const down = await cells();
    ok(up.every((v, i) => i === 0 || up[i - 1] <= v) && down.every((v, i) => i === 0 || down[i - 1] >= v),
      `the table sorts by ${s.debug.groups[s.debug.groups.length - 2]}: ascending, then descending on a second click`);
    await page.$eval('#tune-halflife', (el) => { el.value = '0.25'; });
    await page.click('#tune-apply');
    await waitFor(() => window.previewer.state.character.state.params &&
      window.previewer.state.character.state.params.inertialize_halflife === 0.25);
    s = await state();
    ok(s.debug.applied.inertialize_halflife === 0.25 && s.character.state.inertialize_halflife === 0.25,
      'a half-life set in the panel: set_character_params applied it, character_state reports it');
    await page.click('#candidates th[data-column="cost"]'); // back to ranking by cost for the picture
    await page.$eval('#candidates', (el) => { el.parentElement.scrollLeft = 0; });
    await page.screenshot({ path: path.join(shots, 'previewer-debugger.png') });
    await page.click('#history-live');


  };
  const pushStep = async () => {
    let s;
    // 3c. A physical character (issue 32): a click on its chest pushes it; it
    // staggers (powered) and comes back to motion matching (kinematic).
    await page.$eval('#physical', (e) => { e.checked = true; });
    await page.click('#create');
    // The camera follows the new character a share of the way each drawn
    // frame (a few seconds on a busy machine): the chest is aimed at once the
    // view is on it, else the click lands where the chest was drawn before.
    await waitFor(() => {
      const c = window.previewer.state.character, t = window.previewer.viewer.controls.target;
      return c.frames > 20 && c.physics === 'PHYSICS_KINEMATIC' && Math.hypot(t.x - c.root[0], t.z - c.root[2]) < 0.02;
    });
    const chest = await page.evaluate(() => {
      const s = window.previewer.state, v = window.previewer.viewer, names = s.skeletons[s.character.database].names;
      const spine = names.map((n, i) => (/spine|chest/i.test(n) ? i : -1)).filter((i) => i > 0);
      const b = spine.length ? spine[spine.length - 1] : 1, g = s.character.joints;
      const p = new v.camera.position.constructor(g[3 * b], g[3 * b + 1], g[3 * b + 2]).project(v.camera);
      const r = v.renderer.domElement.getBoundingClientRect();
      return [r.left + ((p.x + 1) / 2) * r.width, r.top + ((1 - p.y) / 2) * r.height, names[b]];
    });
    await page.mouse.click(chest[0], chest[1]);
    await waitFor(() => window.previewer.state.character.pushes === 1); // the push was sent and answered
    // The states come from the stream and from character_state (a slow page
    // has stream frames dropped): any state but kinematic says the push acted.
    await waitFor(() => window.previewer.state.character.physicsSeen.some((n) => n !== 'PHYSICS_KINEMATIC'));
    await page.screenshot({ path: path.join(shots, 'previewer-push.png') });
    await waitFor(() => window.previewer.state.character.physics === 'PHYSICS_KINEMATIC');
    s = await state();
    ok(s.character.pushes === 1 && s.character.physicsSeen[0] === 'PHYSICS_KINEMATIC' &&
      s.character.physicsSeen.length > 2 && s.character.physics === 'PHYSICS_KINEMATIC',
      `a click on the physical character's ${chest[2]} pushed it: ${s.character.physicsSeen.map((n) => n.slice(8).toLowerCase()).join(' -> ')}` +
      ` (${s.character.dropped} stream frames dropped)`);
    await page.$eval('#physical', (e) => { e.checked = false; });

  };

  // 3. A character driven with the keyboard, relative to the camera.
  await page.click('#create');
  await waitFor(() => window.previewer.state.character.frames > 30 && window.previewer.state.character.states > 3);
  await page.mouse.click(800, 450);
  const camera = await page.evaluate(() => window.previewer.viewer.groundBasis());
  s = await state();
  const start = s.character.root, joints0 = s.character.joints;
  await page.keyboard.down('KeyW');
  await sleep(1000);
  // The state polled since W was sent (a starved page had none yet after a second: NaN degrees).
  await waitFor(() => {
    const dv = window.previewer.state.character.state.desired_velocity;
    return Math.hypot(dv.x, dv.z) > 0.5;
  });
  s = await state();
  const stick = s.input.stick;
  ok(Math.abs(stick[0]) < 0.02 && stick[1] > 0.98, `W is the stick straight ahead of the camera: (${stick.map((v) => v.toFixed(3))})`);
  const desired = s.character.state.desired_velocity;
  ok(angle([desired.x, desired.z], camera.forward) < 5,
    `the server's desired velocity points where the camera looks (${angle([desired.x, desired.z], camera.forward).toFixed(1)} deg)`);
  const far = s.character.desired[s.character.desired.length - 1];
  const ahead = [far[0] - s.character.desired[0][0], far[1] - s.character.desired[0][1]];
  ok(s.character.desired.length > 1 && angle(ahead, camera.forward) < 5 && Math.hypot(...ahead) > 0.5,
    `the desired trajectory runs ${Math.hypot(...ahead).toFixed(2)} m ahead, ${angle(ahead, camera.forward).toFixed(1)} deg from the camera's forward`);
  await sleep(1000);
  await page.keyboard.up('KeyW');
  s = await state();
  const moved = [s.character.root[0] - start[0], s.character.root[2] - start[2]];
  ok(Math.hypot(...moved) > MIN_DISTANCE_M && angle(moved, camera.forward) < ANGLE_DEG,
    `2 s of W: the character moved ${Math.hypot(...moved).toFixed(2)} m, ${angle(moved, camera.forward).toFixed(1)} deg from the camera's forward`);
  const n = joints0.length / 3;
  let worst = 0;
  for (let b = 0; b < n; b++) {
    const d = [s.character.joints[3 * b] - joints0[3 * b], s.character.joints[3 * b + 2] - joints0[3 * b + 2]];
    worst = Math.max(worst, angle(d, camera.forward));
  }
  ok(worst < ANGLE_DEG + 15, `every joint of the skeleton moved forward with it (worst ${worst.toFixed(1)} deg)`);
  const before = s.character.root;
  await page.keyboard.down('KeyD');
  await sleep(900);
  await page.screenshot({ path: path.join(shots, 'previewer-character.png') });
  await sleep(900);
  await page.keyboard.up('KeyD');
  s = await state();
  const right = [s.character.root[0] - before[0], s.character.root[2] - before[2]];
  const along = right[0] * camera.right[0] + right[1] * camera.right[1];
  ok(along > 0.5 * Math.hypot(...right) && along > 0.3,
    `then D: it turned to the camera's right (${along.toFixed(2)} m of ${Math.hypot(...right).toFixed(2)} m along it)`);
  // The left stick of a gamepad (simulated: the page polls navigator.getGamepads), from a stop, pulled
  // toward the player (axis 1 positive): toward the camera, a quarter turn from where it faces.
  await waitFor(() => {
    const v = window.previewer.state.character.state.velocity;
    return Math.hypot(v.x, v.z) < 0.1;
  });
  s = await state();
  const beforePad = s.character.root;
  await page.evaluate(() => { window.testPad.axes[1] = 1; });
  await sleep(900);
  const padInput = (await state()).input;
  await sleep(900);
  await page.evaluate(() => { window.testPad.axes[1] = 0; });
  s = await state();
  const back = [s.character.root[0] - beforePad[0], s.character.root[2] - beforePad[2]];
  const toward = -(back[0] * camera.forward[0] + back[1] * camera.forward[1]);
  ok(padInput.source.startsWith('gamepad') && Math.hypot(...padInput.stick) > 0.98,
    `gamepad input read (${padInput.source}: stick ${padInput.stick.map((v) => v.toFixed(2))})`);
  ok(toward > 0.5 * Math.hypot(...back) && toward > 0.3,
    `gamepad stick pulled back: it came toward the camera (${toward.toFixed(2)} m of ${Math.hypot(...back).toFixed(2)} m along it)`);

  await waitFor(() => window.previewer.state.match && window.previewer.state.character.offsets);
  s = await state();
  const m = s.match;
  ok(m.groups.length === s.describe.features.length && m.margin >= 0,
    `matching: cost split by ${m.groups.length} feature groups, margin ${m.margin.toFixed(4)}, best frame ${m.frame}`);
  const dims = s.databases.find((d) => d.name === 'default').feature_dims;
  ok(m.query.length === dims && m.features.length === dims, `query and match feature vectors (${dims} columns each)`);
  let worstGroup = null, worstError = 0;
  for (const g of m.groups) {
    let sum = 0;
    for (let c = g.first; c < g.first + g.dims; c++) sum += (m.query[c] - m.features[c]) ** 2;
    const error = Math.abs(sum - g.cost) / (Math.abs(g.cost) + 1e-6 / COST_TOLERANCE);
    if (error >= worstError) { worstError = error; worstGroup = `${g.name} (${sum.toFixed(5)} from the vectors, ${g.cost.toFixed(5)} from the server)`; }
  }
  ok(worstError < COST_TOLERANCE, `each group's cost is the squared distance of the two vectors' columns (worst: ${worstGroup})`);
  // The best cost is the groups' sum plus the transition cost when the best is not the frame playing.
  const total = m.groups.reduce((a, g) => a + g.cost, 0) + m.transitionCost;
  ok(Math.abs(total - m.cost) <= COST_TOLERANCE * Math.max(m.cost, 1e-3), `the groups (and transition cost ${m.transitionCost}) add up to the best cost (${total.toFixed(5)} / ${m.cost.toFixed(5)})`);
  ok(s.character.state.trajectory.length > 0, `predicted trajectory of ${s.character.state.trajectory.length} points`);
  ok(s.character.touchdowns.some((t) => t > 0), `foot contacts seen: ${s.character.touchdowns.join(', ')} touchdowns`);
  const slips = [...s.character.locks].sort((a, b) => a - b);
  const median = slips.length ? slips[Math.floor(slips.length / 2)] : Infinity;
  ok(slips.length > 0 && median < LOCK_SLIP_M,
    `foot locks seen (${s.character.feet.map((f) => f.bone).join(', ')}); a locked toe stays where it is held ` +
    `(median ${(100 * median).toFixed(2)} cm, max ${slips.length ? (100 * slips[slips.length - 1]).toFixed(2) : '-'} cm over ${slips.length} samples)`);

  // 3b. The debugger; 3c. a physical character pushed by a click (above).
  await debuggerStep();
  await pushStep();

  // 4. A running crowd (another connection's characters), then the encoding switched.
  await page.click('#follow');
  // One id that names no character: the others are subscribed all the same
  // (a subscription is all or nothing on the server), it is listed as not found.
  const everyId = [...crowdIds, ...otherIds];
  await page.type('#crowd-ids', [...everyId, MISSING_ID].join(', '));
  await page.click('#crowd-subscribe');
  await waitFor((ids) => ids.every((id) => (window.previewer.state.crowd.characters[id] || {}).frames > 20), everyId);
  s = await state();
  ok(s.crowd.framed, 'the camera framed the crowd');
  ok(s.crowd.missing.length === 1 && s.crowd.missing[0] === MISSING_ID && !s.crowd.characters[MISSING_ID],
    `an id naming no character (${MISSING_ID}) is left out and listed, the ${everyId.length} others subscribed`);
  ok(!s.playback.visible, 'the clip\'s skeleton is hidden beside the crowd (it is none of them)');
  // Each drawn with its own database's skeleton: every bone, found by name
  // in that database, as long as on the default's characters (the same
  // skeleton, its bones in another order); with the default's bone order a
  // reordered character's bones would join the wrong joints.
  const onWhat = everyId.map((id) => s.crowd.characters[id].database);
  ok(onWhat.every((d, i) => d === (i < crowdIds.length ? 'default' : 'reordered')),
    `each crowd character's database learned from character_state (${onWhat.join(' ')})`);
  const boneLengths = await page.evaluate((ids, names) => {
    const st = window.previewer.state;
    return ids.map((id, i) => {
      const sk = st.skeletons[names[i]], g = st.crowd.characters[id].joints, out = {};
      sk.names.forEach((name, b) => {
        const p = sk.parents[b];
        if (p > 0) out[name] = Math.hypot(g[3 * b] - g[3 * p], g[3 * b + 1] - g[3 * p + 1], g[3 * b + 2] - g[3 * p + 2]);
      });
      return out;
    });
  }, everyId, everyId.map((id, i) => (i < crowdIds.length ? 'default' : 'reordered')));
  let worstBone = '', worstLength = 0;
  for (const lengths of boneLengths) {
    for (const [name, length] of Object.entries(boneLengths[0])) {
      const error = Math.abs(lengths[name] - length);
      if (!(error <= worstLength)) { worstLength = error; worstBone = name; }
    }
  }
  ok(worstLength < 0.002, `every crowd character drawn with its database's skeleton: each bone as long as on the ` +
    `default's characters (worst ${worstBone}, ${(1000 * worstLength).toFixed(2)} mm off)`);
  // Walking: each root 0.3 m from where it was (a second at 0.9 m/s on an idle machine; waited on, not
  // slept: a starved browser draws its frames late, and did not see them move in a fixed second).
  const first = everyId.map((id) => s.crowd.characters[id].root);
  const walkedFrom = Date.now();
  await waitFor((ids, from) => ids.every((id, i) => {
    const r = window.previewer.state.crowd.characters[id].root;
    return Math.hypot(r[0] - from[i][0], r[2] - from[i][2]) > 0.3;
  }), everyId, first);
  s = await state();
  const walked = everyId.map((id, i) => Math.hypot(s.crowd.characters[id].root[0] - first[i][0],
    s.crowd.characters[id].root[2] - first[i][2]));
  ok(walked.every((d) => d > 0.3), `${everyId.length} crowd characters streamed and walking (${walked.map((d) => d.toFixed(2)).join(' ')} m ` +
    `in ${((Date.now() - walkedFrom) / 1000).toFixed(1)} s)`);
  await page.select('#encoding', 'ENCODING_QUANTIZED');
  await waitFor(() => document.getElementById('stream-info').textContent.startsWith('ENCODING_QUANTIZED'));
  await waitFor((ids) => ids.every((id) => window.previewer.state.crowd.characters[id].switched), everyId);
  s = await state();
  const perTick = everyId.map((id) => {
    const w = s.crowd.characters[id].switched;
    return w.move / Math.max(1, w.ticks);
  });
  ok(s.encoding === 'ENCODING_QUANTIZED' && Math.max(...perTick) < SWITCH_M_PER_TICK,
    `quantized frames decode to the same crowd: across the switch the roots moved ${perTick.map((v) => (100 * v).toFixed(2)).join(' ')} cm a tick`);
  await page.click('#crowd-frame');
  await page.evaluate(() => document.getElementById('crowd-list').scrollIntoView({ block: 'end' }));
  await sleep(800);
  await page.screenshot({ path: path.join(shots, 'previewer-crowd.png') });
  await page.click('.tabs button[data-tab="features"]');
  await page.evaluate(() => window.previewer.viewer.frame(...window.previewer.state.character.root, 6));
  await sleep(600);
  await page.screenshot({ path: path.join(shots, 'previewer-database.png') });

  // 4b. Another client destroys the characters on "reordered" and unloads
  // it: the table drops it by itself, default still selected, and the crowd
  // lists those characters gone.
  const unloadedAt = Date.now();
  await harness('unload');
  await waitFor(() => ![...document.querySelectorAll('#databases tbody tr')].some((tr) => tr.cells[0].textContent === 'reordered'));
  await waitFor((ids) => ids.every((id) => window.previewer.state.crowd.characters[id].gone), otherIds);
  s = await state();
  ok((await tableNames()).join() === 'default' && s.database === 'default' && !s.skeletons.reordered &&
    (await page.$eval('#databases tbody tr.on', (tr) => tr.cells[0].textContent)) === 'default',
    `then unloaded: the table drops it within ${((Date.now() - unloadedAt) / 1000).toFixed(1)} s, default still selected`);
  ok(crowdIds.every((id) => !s.crowd.characters[id].gone), 'its characters listed gone, the others walking on');

  // 4c. A crowd of 1,000 (issue 36), watched as a region round the view:
  // drawn in three draw calls whatever its size, its frame rate under
  // software rendering, a click on one picks and labels it.
  const framesPerSecond = () => page.evaluate(() => new Promise((resolve) => {
    let n = 0;
    const t0 = performance.now();
    const count = () => { n++; if (performance.now() - t0 < 3000) requestAnimationFrame(count); else resolve((1000 * n) / (performance.now() - t0)); };
    requestAnimationFrame(count);
  }));
  await page.click('#crowd-clear');
  const emptyFps = await framesPerSecond(); // the same page without a crowd: what this machine gives now
  const bigIds = (await harness('crowd')).split(',');
  await page.evaluate(() => {
    const v = window.previewer.viewer;
    v.controls.target.set(-300, 0.9, 0);
    v.camera.position.set(-300, 45, -50);
  });
  await page.$eval('#crowd-radius', (e) => { e.value = '40'; });
  await page.click('#crowd-watch');
  await waitFor((n) => Object.values(window.previewer.state.crowd.characters).filter((e) => e.joints).length >= n,
    bigIds.length);
  await page.click('#crowd-frame');
  await sleep(500);
  const fps = await framesPerSecond();
  s = await state();
  const watched = Object.keys(s.crowd.characters).length;
  ok(watched === bigIds.length && bigIds.every((id) => s.crowd.characters[id]),
    `the region round the view announced the ${bigIds.length} characters in it (${watched} watched)`);
  // Frames a second are a benchmark figure, printed, not asserted (a timed
  // check fails on a busy machine): the issue's target is 20 under software
  // rendering.
  console.log(`  figure: ${watched} characters drawn at ${fps.toFixed(1)} frames a second under software rendering ` +
    `(the page without them: ${emptyFps.toFixed(1)} in the same run; target 20)`);
  const aim = await page.evaluate((id) => {
    const v = window.previewer.viewer, g = window.previewer.state.crowd.characters[id].joints;
    const p = new v.camera.position.constructor(g[3], g[4], g[5]).project(v.camera);
    const r = v.renderer.domElement.getBoundingClientRect();
    return [r.left + ((p.x + 1) / 2) * r.width, r.top + ((1 - p.y) / 2) * r.height];
  }, bigIds[500]);
  await page.mouse.click(aim[0], aim[1]);
  await waitFor(() => document.querySelector('.crowd-label.chosen'));
  s = await state();
  const chosenLabel = await page.$eval('.crowd-label.chosen', (e) => e.textContent);
  ok(s.crowd.chosen !== null && s.crowd.characters[s.crowd.chosen] && chosenLabel === s.crowd.characters[s.crowd.chosen].label,
    `a click on a character picks it (${chosenLabel}) and labels it; the panel names it`);
  await page.screenshot({ path: path.join(shots, 'previewer-crowd-1000.png') });
  // The 1,000 go; the first crowd is watched by ids again, as before 4c.
  await page.click('#crowd-clear');
  await harness('crowd-end');
  // A page too slow for the crowd's stream is cut by the server as a slow
  // reader and connects again by itself: subscribing may meet the closing
  // connection, so it is tried again once connected.
  for (let attempt = 1; ; attempt++) {
    await waitFor(() => window.previewer.state.connected);
    await page.$eval('#crowd-ids', (e) => { e.value = ''; });
    await page.type('#crowd-ids', crowdIds.join(', '));
    await page.click('#crowd-subscribe');
    try {
      await page.waitForFunction((ids) => ids.every((id) => (window.previewer.state.crowd.characters[id] || {}).frames > 5),
        { timeout: 15000, polling: 100 }, crowdIds);
      break;
    } catch (e) {
      if (attempt === 3) throw e;
      await sleep(1000);
    }
  }

  // 5. The server dies and comes back on its port (killed, then started
  // again): the character and the crowd go with the connection, no input is
  // sent to a character that is no longer there while W is held, and the page
  // connects again by itself; a new character walks.
  s = await state();
  const restored = s.reconnect.restored;
  await page.keyboard.down('KeyW');
  await harness('kill');
  await waitFor(() => !window.previewer.state.connected);
  await sleep(800); // W held while the server is away
  s = await state();
  ok(s.character.id === null && !s.match, 'the server gone: its character is dropped with its panels');
  ok(Object.values(s.crowd.characters).every((c) => c.gone) && s.crowd.subscription === null,
    'the crowd is marked lost with the connection');
  const status = await page.$eval('#status', (e) => e.textContent);
  ok(status.includes('reconnecting'), `the status says so: "${status}"`);
  await page.screenshot({ path: path.join(shots, 'previewer-lost.png') });
  await harness('start');
  await waitFor((n) => window.previewer.state.connected && window.previewer.state.reconnect.restored > n &&
    window.previewer.state.describe, restored);
  await page.keyboard.up('KeyW');
  ok(true, 'the server back on its port: the page connected again by itself');
  await page.click('#create');
  await waitFor(() => window.previewer.state.character.frames > 30 && window.previewer.state.character.states > 3);
  s = await state();
  ok(await page.$eval('#follow', (e) => e.checked), 'the camera follows the new character (the crowd had turned follow off)');
  const again = s.character.root;
  await page.keyboard.down('KeyW');
  await sleep(1500);
  await page.keyboard.up('KeyW');
  s = await state();
  ok(Math.hypot(s.character.root[0] - again[0], s.character.root[2] - again[2]) > 0.5,
    `a new character on the restarted server walks (${Math.hypot(s.character.root[0] - again[0], s.character.root[2] - again[2]).toFixed(2)} m)`);
  ok(pageErrors.length === 0, `no page errors${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`);
  s = await state();
  ok(s.errors.length === 0, `no request failed${s.errors.length ? `: ${s.errors.join('; ')}` : ''}`);
  if (s.stalls) console.log(`  note: ${s.stalls} call(s) waited over 10 s for their answer (a busy machine), then had it`);
} finally {
  await browser.close();
}
report('previewer');

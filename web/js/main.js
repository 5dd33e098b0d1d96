// main.js: the previewer's start: it loads the panels and wires them
// together, and does nothing of its own beyond the bridge's address, the
// frame loop and the first Connect. Each panel is a module:
//   shared.js     the page's state (window.previewer), the 3-D view, helpers
//   session.js    connect, hello, disconnect, reconnection; `conn`, `call`
//   databases.js  list_databases (polled), describe_database, skeletons
//   timeline.js   a range played with pose requests
//   character.js  create / destroy, its stream, character_state, contacts
//   steering.js   keyboard and gamepad to set_inputs
//   matching.js   the character's query searched and explained
//   offsets.js    the inertialization offsets chart
//   crowd.js      a crowd by ids or as a region round the view, drawn by crowdview.js
//   push.js       pushes for a physical character: click a bone
//   debugger.js   the character's history paused and scrubbed, its candidates, parameters live
//   streams.js    the encoding of every subscription
//   meters.js     fps and traffic
// Messages: protocol.js (protobufjs over the websockify bridge); drawing:
// viewer.js; quantized poses: quantized.js; forward kinematics: kinematics.js.
//
// Everything the page shows comes from a request: list_databases and
// describe_database (databases), pose (the timeline), create_characters,
// set_inputs, character_state, subscribe / update_subscription / unsubscribe
// (characters and crowds), character_state with the query the character
// would search with now and its foot locks, search of that query with
// explain and include_features (matching), set_history, character_history
// and set_character_params (the debugger), character_state of each crowd
// character for the database it runs on (its skeleton). The server pushes
// no event when a database is loaded or unloaded: the page lists them again
// while it is visible. window.previewer exposes the page's state (tests read
// it instead of pixels), the view and the page's actions.
import { $, app, quietly, viewer } from './shared.js';
import { connect, hooks } from './session.js';
import { describe, listDatabases } from './databases.js';
import { advancePlayback, selectRange } from './timeline.js';
import { createCharacter, destroyCharacter, followCamera, resetCharacter } from './character.js';
import { steer } from './steering.js';
import { clearCrowd, crowdLost, frameCrowd, subscribeCrowd, watchRegion } from './crowd.js';
import { meters } from './meters.js';
import { applyTuning, historyOn, pauseHistory, resumeHistory, scrubTo, sortBy } from './debugger.js';
import './streams.js';
import { pushBone } from './push.js';

const params = new URLSearchParams(location.search);

// What comes with a connection and goes with it.
Object.assign(hooks, {
  opened: () => listDatabases(),
  closing: () => { clearCrowd(); resetCharacter(); },
  lost: () => { resetCharacter(); crowdLost(); },
});

let lastTime = 0;
viewer.hooks.push((t) => {
  const dt = Math.min(0.1, (t - (lastTime || t)) / 1000);
  lastTime = t;
  advancePlayback(dt);
  steer(dt, t);
  followCamera();
  meters(t);
});

$('url').value = params.get('bridge') || `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`;
$('token').value = params.get('token') || '';
Object.assign(app, { connect, describe, selectRange, createCharacter, destroyCharacter, subscribeCrowd, watchRegion, frameCrowd, viewer,
  historyOn, pauseHistory, resumeHistory, scrubTo, sortBy, applyTuning, pushBone });
if (params.get('connect') !== '0') quietly(connect());

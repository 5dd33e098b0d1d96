// session.js: the page's connection to the server: Connect (hello with the
// auth token), Disconnect, and reconnection when the connection is lost
// without the user asking (the server restarted, the bridge went away),
// after RECONNECT_MS. It owns `conn` and `proto`, exported as live bindings
// (importers see the connection of the moment, null while there is none;
// only this module assigns them), and `call`, a request that says its
// failure in a toast. Messages themselves: protocol.js.
//
// It knows no panel: what goes with a connection (the character, the crowd's
// subscription) and what comes after hello (the databases) reach it through
// `hooks`, which main.js fills. Characters and subscriptions do not survive a
// lost connection (the server destroys a connection's characters with it).
import { AnimError, Connection, loadProtocol } from './protocol.js';
import { $, quietly, state, toast } from './shared.js';

// A connection lost without the user asking is tried again after these
// delays, the last repeated.
const RECONNECT_MS = [500, 1000, 2000, 4000];

export let proto = null;
export let conn = null;

export const hooks = {
  // After hello: the first requests of the connection (awaited by connect).
  opened: async () => {},
  // Before the page closes its connection (Connect again, Disconnect): while
  // `conn` is still there to unsubscribe and destroy with.
  closing: () => {},
  // After the connection went away under the page (`conn` already null).
  lost: () => {},
};

export async function call(kind, body) {
  try {
    return await conn.call(kind, body);
  } catch (e) {
    toast(e.message);
    throw e;
  }
}

export const encodingName = (e) => (typeof e === 'string' ? e : proto.PoseEncoding.valuesById[e]);

// Connects (the Connect button, the page's start, a reconnection): hello,
// then hooks.opened. Until Disconnect, a lost connection is tried again.
export async function connect(retrying = false) {
  const r = state.reconnect;
  clearTimeout(r.timer);
  closeConnection();
  r.wanted = true;
  let opened;
  try {
    proto = proto || await loadProtocol('animserver.proto');
    opened = new Connection(proto, $('url').value);
    await opened.open();
  } catch (e) {
    if (!retrying) toast(e.message);
    scheduleReconnect(e.message);
    return;
  }
  conn = opened;
  conn.onclose = (why) => { if (conn === opened) connectionLost(why); };
  // Slow, not failed: the answer still comes (protocol.js); said, and counted in state.stalls.
  conn.onstall = (kind, ms) => {
    state.stalls++;
    toast(`${kind}: no answer yet after ${ms / 1000} s (a busy server, bridge or browser); still waiting`, false);
  };
  let hello;
  try {
    hello = await opened.call('hello', { protocol_version: 1, client_name: 'previewer', auth_token: $('token').value });
  } catch (e) {
    // A refused token or protocol would be refused again; a connection lost
    // meanwhile is tried again (connectionLost), without a word each time.
    if (e instanceof AnimError) {
      toast(e.message);
      r.wanted = false;
      r.refused = e.serverMessage; // the status keeps it (the bridge's close reason says only "Target closed")
    }
    return;
  }
  if (r.attempts) r.restored++;
  r.attempts = 0;
  r.refused = null;
  state.server = hello;
  state.connected = true;
  $('status').textContent = `connected: animserver ${hello.server_version}`;
  $('status').className = 'status on';
  const l = hello.limits;
  $('server-info').textContent = `protocol ${hello.protocol_version}, connection ${hello.connection_id}` +
    `${hello.admin ? ', admin' : ''}\ntick ${l.tick_rate} Hz, max pose frames ${l.max_pose_frames}\n` +
    `capabilities: ${hello.capabilities.join(' ')}`;
  await hooks.opened();
}

export function disconnect() {
  state.reconnect.wanted = false;
  clearTimeout(state.reconnect.timer);
  closeConnection();
  $('status').textContent = 'disconnected';
  $('status').className = 'status off';
}

function closeConnection() {
  hooks.closing();
  if (conn) { conn.onclose = null; conn.close(); }
  conn = null;
  state.connected = false;
}

// The connection went away under the page: its character and subscriptions
// went with it on the server, so they go here too (no input is sent to a
// character that no longer exists), and the page tries again.
function connectionLost(why) {
  conn = null;
  state.connected = false;
  state.reconnect.lost = why;
  hooks.lost();
  const refused = state.reconnect.refused;
  $('status').textContent = refused ? `refused: ${refused}` : `disconnected: ${why}`;
  $('status').className = 'status off';
  scheduleReconnect(why);
}

function scheduleReconnect(why) {
  const r = state.reconnect;
  if (!r.wanted) return;
  const delay = RECONNECT_MS[Math.min(r.attempts, RECONNECT_MS.length - 1)];
  r.attempts++;
  $('status').textContent = `disconnected (${why}): reconnecting in ${(delay / 1000).toFixed(1)} s`;
  $('status').className = 'status off';
  r.timer = setTimeout(() => connect(true), delay);
}

$('connect').onclick = () => quietly(connect());
$('disconnect').onclick = () => disconnect();

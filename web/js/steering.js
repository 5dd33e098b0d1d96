// steering.js: the keyboard and gamepad drive the page's character: the
// stick relative to the camera (as the reference implementation's
// desired_velocity_update), turned into the server's stick frame and sent
// with set_inputs when it changes, and at least every INPUT_RESEND_MS while
// held; Q / E and the right stick turn the camera. state.input says what was
// sent, the HUD what is held.
//
// It creates no character (character.js) and sends nothing while there is
// none or no connection. main.js calls steer once per rendered frame.
import { $, fmt, state, toast, viewer } from './shared.js';
import { conn } from './session.js';

const INPUT_RESEND_MS = 250; // set_inputs at least this often while a key is held

const keys = new Set();
const typing = () => ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement && document.activeElement.tagName);
window.addEventListener('keydown', (e) => {
  if (typing()) return;
  keys.add(e.code);
  if (e.code === 'Space' || e.code.startsWith('Arrow')) e.preventDefault();
});
window.addEventListener('keyup', (e) => keys.delete(e.code));
window.addEventListener('blur', () => keys.clear());

// One rendered frame: dt seconds since the last, `now` in milliseconds.
export function steer(dt, now) {
  const c = state.character;
  let sx = 0, sy = 0, strafe = false, orbit = 0;
  if (keys.has('KeyW') || keys.has('ArrowUp')) sy += 1;
  if (keys.has('KeyS') || keys.has('ArrowDown')) sy -= 1;
  if (keys.has('KeyD') || keys.has('ArrowRight')) sx += 1;
  if (keys.has('KeyA') || keys.has('ArrowLeft')) sx -= 1;
  if (keys.has('KeyQ')) orbit += 1;
  if (keys.has('KeyE')) orbit -= 1;
  strafe = keys.has('Space');
  let source = 'keyboard';
  const pad = navigator.getGamepads ? [...navigator.getGamepads()].find((g) => g && g.connected) : null;
  if (pad) {
    const dead = (v) => (Math.abs(v) < 0.15 ? 0 : v);
    const lx = dead(pad.axes[0] || 0), ly = dead(pad.axes[1] || 0), rx = dead(pad.axes[2] || 0);
    if (lx || ly || rx || (pad.buttons[6] && pad.buttons[6].value > 0.5)) {
      source = `gamepad ${pad.id.slice(0, 24)}`;
      sx += lx; sy -= ly; orbit -= rx * 1.5;
      strafe = strafe || (pad.buttons[6] && pad.buttons[6].value > 0.5) || (pad.buttons[4] && pad.buttons[4].pressed);
    }
  }
  if (orbit) viewer.orbit(orbit * 1.6 * dt);
  let length = Math.hypot(sx, sy);
  if (length > 1) { sx /= length; sy /= length; length = 1; }
  if (keys.has('ShiftLeft') || keys.has('ShiftRight')) { sx *= 0.45; sy *= 0.45; }
  // Screen directions -> world -> the server's stick frame: world = yaw(azimuth) (x, z).
  const { forward, right } = viewer.groundBasis();
  const wx = forward[0] * sy + right[0] * sx, wz = forward[1] * sy + right[1] * sx;
  const azimuth = viewer.cameraAzimuth();
  const ca = Math.cos(azimuth), sa = Math.sin(azimuth);
  const stick = [wx * ca - wz * sa, wx * sa + wz * ca];
  const input = state.input;
  const changed = Math.hypot(stick[0] - input.stick[0], stick[1] - input.stick[1]) > 0.01 || strafe !== input.strafe ||
    (Math.hypot(...stick) > 0 && Math.abs(azimuth - input.azimuth) > 0.02);
  Object.assign(input, { source, world: [wx, wz] });
  $('hud-input').textContent = c.id ? `${source}: stick (${fmt(stick[0], 2)}, ${fmt(stick[1], 2)})  camera ` +
    `${fmt(azimuth * 180 / Math.PI, 0)}°${strafe ? '  strafe' : ''}` : 'create a character to drive it';
  if (!c.id || !conn || !state.connected) return;
  if (!changed && (Math.hypot(...stick) === 0 || now - input.sent < INPUT_RESEND_MS)) return;
  Object.assign(input, { stick, strafe, azimuth, sent: now });
  conn.call('set_inputs', { inputs: [{ character: c.id, stick: { x: stick[0], z: stick[1], camera_azimuth: azimuth, strafe } }] })
    .catch((e) => { if (state.connected) toast(e.message); }); // a lost connection says so itself
}

// meters.js: the header's meters, once a second: frames drawn per second,
// stream frames received per second (state.streamFrames, counted by the
// character's and the crowd's streams) and the bytes in from the connection.
// It measures; it changes nothing. main.js calls meters once per rendered frame.
import { $, state } from './shared.js';
import { conn } from './session.js';

let meterT = 0, meterFrames = 0, meterBytes = 0, frameCount = 0;

// One rendered frame at time t (milliseconds).
export function meters(t) {
  frameCount++;
  if (t - meterT < 1000) return;
  const s = (t - meterT) / 1000;
  $('fps').textContent = `${Math.round(frameCount / s)} fps`;
  if (conn) {
    $('traffic').textContent = `${Math.round((state.streamFrames - meterFrames) / s)} frames/s  ` +
      `${((conn.bytesIn - meterBytes) / 1024 / s).toFixed(1)} KiB/s in`;
    meterBytes = conn.bytesIn;
  }
  meterFrames = state.streamFrames;
  frameCount = 0;
  meterT = t;
}

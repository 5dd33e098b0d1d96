// quantized.js: CharacterPose.quantized (ENCODING_QUANTIZED) decoded from the
// docs/protocol.md ("Encodings and conventions"), for n
// bones, little-endian:
//   root world position: 3 x int32, steps of 1e-4 m;
//   each bone's rotation: 7 bytes, the low 56 bits of a uint64: bits 0-15,
//     16-31, 32-47 three int16 components in w, x, y, z order skipping the
//     dropped one, each int16 / 32767 / sqrt(2); bits 48-49 the index of the
//     dropped largest component, sqrt(max(0, 1 - sum of squares of the others));
//   unless rotationsOnly: bones 1..n-1's local positions, 3 x int16, 1/8192 m.
// Size: 12 + 7n + 6(n - 1) bytes, or 12 + 7n with rotations only.

const COMPONENT = 1 / (32767 * Math.SQRT2);

export function quantizedBones(nbytes, rotationsOnly) {
  const body = rotationsOnly ? nbytes - 12 : nbytes - 6;
  const per = rotationsOnly ? 7 : 13;
  if (body < per || body % per) throw new Error(`${nbytes} bytes is no quantized pose`);
  return body / per;
}

// Returns {positions: Float32Array(3n) (only 3 with rotationsOnly), rotations: Float32Array(4n)}:
// bone 0 in world space, the others local to their parent.
export function decodeQuantized(bytes, rotationsOnly = false) {
  const n = quantizedBones(bytes.length, rotationsOnly);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const positions = new Float32Array(rotationsOnly ? 3 : 3 * n);
  for (let i = 0; i < 3; i++) positions[i] = view.getInt32(4 * i, true) * 1e-4;
  const rotations = new Float32Array(4 * n);
  const kept = [0, 0, 0];
  for (let b = 0; b < n; b++) {
    const at = 12 + 7 * b;
    for (let i = 0; i < 3; i++) kept[i] = view.getInt16(at + 2 * i, true) * COMPONENT;
    const dropped = view.getUint8(at + 6) & 3; // bits 48-49
    let sum = 0;
    for (let i = 0, slot = 0; i < 4; i++) {
      if (i === dropped) continue;
      rotations[4 * b + i] = kept[slot];
      sum += kept[slot] * kept[slot];
      slot++;
    }
    rotations[4 * b + dropped] = Math.sqrt(Math.max(0, 1 - sum));
  }
  if (!rotationsOnly) {
    const base = 12 + 7 * n;
    for (let b = 1; b < n; b++) {
      for (let i = 0; i < 3; i++) positions[3 * b + i] = view.getInt16(base + 6 * (b - 1) + 2 * i, true) / 8192;
    }
  }
  return { positions, rotations };
}

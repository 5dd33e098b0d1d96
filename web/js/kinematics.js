// kinematics.js: quaternions (w, x, y, z, as on the wire) and forward
// kinematics of a local pose whose bone 0 is already in world space.

export function quatMul(a, ai, b, bi, out, oi) {
  const aw = a[ai], ax = a[ai + 1], ay = a[ai + 2], az = a[ai + 3];
  const bw = b[bi], bx = b[bi + 1], by = b[bi + 2], bz = b[bi + 3];
  out[oi] = aw * bw - ax * bx - ay * by - az * bz;
  out[oi + 1] = aw * bx + ax * bw + ay * bz - az * by;
  out[oi + 2] = aw * by - ax * bz + ay * bw + az * bx;
  out[oi + 3] = aw * bz + ax * by - ay * bx + az * bw;
}

// v (3 at vi) rotated by q (4 at qi), written at out[oi..oi+2].
export function quatRotate(q, qi, v, vi, out, oi) {
  const w = q[qi], x = q[qi + 1], y = q[qi + 2], z = q[qi + 3];
  const vx = v[vi], vy = v[vi + 1], vz = v[vi + 2];
  const tx = 2 * (y * vz - z * vy), ty = 2 * (z * vx - x * vz), tz = 2 * (x * vy - y * vx);
  out[oi] = vx + w * tx + (y * tz - z * ty);
  out[oi + 1] = vy + w * ty + (z * tx - x * tz);
  out[oi + 2] = vz + w * tz + (x * ty - y * tx);
}

// Global positions (3n) and rotations (4n) from local ones; parents precede children.
export function forwardKinematics(parents, positions, rotations, outPositions, outRotations) {
  const n = parents.length;
  const gp = outPositions || new Float32Array(3 * n);
  const gr = outRotations || new Float32Array(4 * n);
  for (let i = 0; i < 3; i++) gp[i] = positions[i];
  for (let i = 0; i < 4; i++) gr[i] = rotations[i];
  const offset = [0, 0, 0];
  for (let b = 1; b < n; b++) {
    const p = parents[b];
    quatRotate(gr, 4 * p, positions, 3 * b, offset, 0);
    for (let i = 0; i < 3; i++) gp[3 * b + i] = gp[3 * p + i] + offset[i];
    quatMul(gr, 4 * p, rotations, 4 * b, gr, 4 * b);
  }
  return { positions: gp, rotations: gr };
}

// Heading (radians about +Y, 0 facing +Z) of a rotation's forward axis.
export function heading(q, qi = 0) {
  const f = [0, 0, 0];
  quatRotate(q, qi, [0, 0, 1], 0, f, 0);
  return Math.atan2(f[0], f[2]);
}

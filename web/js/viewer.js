// viewer.js: the 3-D view (three.js): orbit camera, ground grid, skeletons as
// joints and bones, trails, trajectories, contact markers. It draws what it is
// given in world space (metres, +Y up); it knows nothing of the protocol.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

export const PALETTE = [0x4fc3f7, 0xffb74d, 0x81c784, 0xe57373, 0xba68c8, 0xfff176, 0x4db6ac, 0xf06292,
  0x9575cd, 0xaed581];

export class Viewer {
  constructor(canvas) {
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio || 1);
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0x1b1e23);
    this.scene.fog = new THREE.Fog(0x1b1e23, 25, 60);
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.05, 1000);
    this.camera.position.set(3.5, 2.6, -4.5);
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.target.set(0, 0.9, 0);
    this.controls.enableDamping = true;
    this.controls.maxPolarAngle = Math.PI * 0.495;
    this.controls.update();

    this.scene.add(new THREE.HemisphereLight(0xdde6ff, 0x30302a, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(4, 10, 3);
    this.scene.add(sun);
    const ground = new THREE.Mesh(new THREE.PlaneGeometry(200, 200).rotateX(-Math.PI / 2),
      new THREE.MeshBasicMaterial({ color: 0x202328 })); // unlit: the grid lines stay readable on it
    ground.position.y = -0.002;
    const minor = grid(80, 1, 0x3b434d);
    const major = grid(80, 5, 0x5d6875);
    major.position.y = 0.001;
    // The grid moves with the orbit target in whole 5 m steps: an endless
    // floor wherever the characters walk.
    this.floor = new THREE.Group();
    this.floor.add(ground, minor, major);
    this.scene.add(this.floor);
    this.scene.add(axes());
    this.hooks = [];
    this.resize();
    window.addEventListener('resize', () => this.resize());
    const loop = (t) => {
      for (const hook of this.hooks) hook(t);
      this.controls.update();
      const target = this.controls.target;
      this.floor.position.set(Math.round(target.x / 5) * 5, 0, Math.round(target.z / 5) * 5);
      // Fog from beyond what is looked at, however far the camera is.
      const distance = this.camera.position.distanceTo(target);
      this.scene.fog.near = distance + 12;
      this.scene.fog.far = distance + 45;
      this.renderer.render(this.scene, this.camera);
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  }

  resize() {
    const canvas = this.renderer.domElement;
    const w = canvas.clientWidth || 800, h = canvas.clientHeight || 600;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  // Camera azimuth as the seed's stick expects it: the heading (radians about
  // +Y, 0 = +Z) of the direction the camera looks along, on the ground.
  cameraAzimuth() {
    const d = new THREE.Vector3();
    this.camera.getWorldDirection(d);
    return Math.atan2(d.x, d.z);
  }

  // The camera's forward and right directions on the ground (unit x, z).
  groundBasis() {
    const f = new THREE.Vector3();
    this.camera.getWorldDirection(f);
    f.y = 0;
    f.normalize();
    const right = new THREE.Vector3().crossVectors(f, new THREE.Vector3(0, 1, 0)).normalize();
    return { forward: [f.x, f.z], right: [right.x, right.z] };
  }

  // Keeps the orbit target on a point (the driven character), moving the camera along.
  follow(x, y, z, blend = 0.15) {
    const t = this.controls.target;
    const dx = (x - t.x) * blend, dy = (y - t.y) * blend, dz = (z - t.z) * blend;
    t.x += dx; t.y += dy; t.z += dz;
    this.camera.position.x += dx; this.camera.position.y += dy; this.camera.position.z += dz;
  }

  // Rotates the camera about the target (gamepad right stick, keys).
  orbit(dAzimuth, dElevation = 0) {
    const offset = this.camera.position.clone().sub(this.controls.target);
    const s = new THREE.Spherical().setFromVector3(offset);
    s.theta += dAzimuth;
    s.phi = Math.min(Math.max(s.phi + dElevation, 0.15), Math.PI * 0.49);
    offset.setFromSpherical(s);
    this.camera.position.copy(this.controls.target).add(offset);
  }

  // Looks at (x, y, z) from `distance` metres, keeping the direction the
  // camera looks from (taken before the target moves: a far target would
  // otherwise lay the camera flat on the ground).
  frame(x, y, z, distance = 6) {
    const dir = this.camera.position.clone().sub(this.controls.target).normalize();
    this.controls.target.set(x, y, z);
    this.camera.position.copy(this.controls.target).addScaledVector(dir, distance);
  }

  // Frames a set of ground points [[x, z], ...]: their centre, far enough
  // back for the widest of them to fit the view, from at least 25 degrees up.
  frameAll(points, height = 0.9) {
    if (!points.length) return;
    const cx = points.reduce((a, p) => a + p[0], 0) / points.length;
    const cz = points.reduce((a, p) => a + p[1], 0) / points.length;
    const radius = Math.max(1.5, ...points.map((p) => Math.hypot(p[0] - cx, p[1] - cz))) + 1.0;
    const half = (this.camera.fov * Math.PI) / 360;
    const fit = Math.min(half, Math.atan(Math.tan(half) * this.camera.aspect));
    const offset = this.camera.position.clone().sub(this.controls.target);
    const s = new THREE.Spherical().setFromVector3(offset);
    s.phi = Math.min(s.phi, Math.PI / 2 - (25 * Math.PI) / 180);
    s.radius = radius / Math.sin(fit);
    this.controls.target.set(cx, height, cz);
    this.camera.position.copy(this.controls.target).add(new THREE.Vector3().setFromSpherical(s));
  }
}

// A square grid of lines every `step` metres, one colour, each line cut into
// 1 m segments: a software rasterizer (SwiftShader, headless Chromium) drops a
// whole line that has an end behind the camera instead of clipping it.
function grid(size, step, color) {
  const points = [];
  const half = size / 2;
  for (let v = -half; v <= half + 1e-6; v += step) {
    for (let u = -half; u < half; u += 1) {
      points.push(u, 0, v, u + 1, 0, v, v, 0, u, v, 0, u + 1);
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.Float32BufferAttribute(points, 3));
  return new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ color }));
}

function axes() {
  const group = new THREE.Group();
  const make = (color, to) => {
    const g = new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), to]);
    return new THREE.Line(g, new THREE.LineBasicMaterial({ color }));
  };
  group.add(make(0xe57373, new THREE.Vector3(1, 0, 0)), make(0x64b5f6, new THREE.Vector3(0, 0, 1)));
  group.position.y = 0.004; // above the grid lines
  return group;
}

const jointGeometry = new THREE.SphereGeometry(1, 12, 8);
const boneGeometry = new THREE.CylinderGeometry(1, 1, 1, 8, 1).translate(0, 0.5, 0);

// A skeleton drawn from world positions: a sphere per joint, a tapered
// cylinder per bone (parent -> child), in one colour; `opacity` below 1
// draws it translucent (a ghost: the debugger's candidates, ghosts.js).
export class Rig {
  constructor(viewer, parents, color, { contactBones = [], names = [], opacity = 1 } = {}) {
    this.viewer = viewer;
    this.parents = parents;
    this.n = parents.length;
    const see = opacity < 1 ? { transparent: true, opacity, depthWrite: false } : {};
    const material = new THREE.MeshStandardMaterial({ color, roughness: 0.55, metalness: 0.05, ...see });
    const jointMaterial = new THREE.MeshStandardMaterial({ color: opacity < 1 ? color : 0xf5f5f5, roughness: 0.4,
      ...see });
    this.joints = new THREE.InstancedMesh(jointGeometry, jointMaterial, this.n);
    this.bones = new THREE.InstancedMesh(boneGeometry, material, this.n);
    this.joints.frustumCulled = this.bones.frustumCulled = false;
    this.group = new THREE.Group();
    this.group.add(this.joints, this.bones);
    this.contactIndex = contactBones.map((b) => names.indexOf(b));
    this.contactMarkers = this.contactIndex.map(() => {
      const m = new THREE.Mesh(new THREE.RingGeometry(0.05, 0.085, 24).rotateX(-Math.PI / 2),
        new THREE.MeshBasicMaterial({ color: 0x66bb6a, transparent: true, opacity: 0.9, side: THREE.DoubleSide }));
      m.visible = false;
      this.group.add(m);
      return m;
    });
    viewer.scene.add(this.group);
    this.positions = new Float32Array(3 * this.n);
    this.m = new THREE.Matrix4();
    this.q = new THREE.Quaternion();
    this.up = new THREE.Vector3(0, 1, 0);
    this.dir = new THREE.Vector3();
    this.s = new THREE.Vector3();
    this.p = new THREE.Vector3();
  }

  // globals: Float32Array(3n) world positions; contacts: bit i = contact bone i planted.
  update(globals, contacts = 0) {
    this.positions.set(globals.subarray(0, 3 * this.n));
    const { m, q, up, dir, s, p } = this;
    for (let b = 0; b < this.n; b++) {
      p.set(globals[3 * b], globals[3 * b + 1], globals[3 * b + 2]);
      const r = b === 0 ? 0.035 : 0.022;
      m.compose(p, q.identity(), s.set(r, r, r));
      this.joints.setMatrixAt(b, m);
      const parent = this.parents[b];
      if (parent < 0) {
        m.makeScale(0, 0, 0);
      } else {
        dir.set(globals[3 * parent] - p.x, globals[3 * parent + 1] - p.y, globals[3 * parent + 2] - p.z);
        const length = dir.length();
        q.setFromUnitVectors(up, length > 1e-6 ? dir.divideScalar(length) : up);
        const w = parent === 0 ? 0.008 : 0.016;
        m.compose(p, q, s.set(w, length, w));
      }
      this.bones.setMatrixAt(b, m);
    }
    this.joints.instanceMatrix.needsUpdate = this.bones.instanceMatrix.needsUpdate = true;
    this.contactIndex.forEach((bone, i) => {
      const marker = this.contactMarkers[i];
      marker.visible = bone >= 0 && ((contacts >> i) & 1) === 1;
      if (marker.visible) marker.position.set(globals[3 * bone], 0.004, globals[3 * bone + 2]);
    });
  }

  setVisible(v) { this.group.visible = v; }

  // The joints as drawn (read back from the instance matrices, not from
  // what update was given): [[x, y, z], ...] in world space.
  drawnJoints() {
    const m = new THREE.Matrix4(), p = new THREE.Vector3();
    return Array.from({ length: this.n }, (_, b) => {
      this.joints.getMatrixAt(b, m);
      p.setFromMatrixPosition(m);
      return [p.x, p.y, p.z];
    });
  }

  dispose() {
    this.viewer.scene.remove(this.group);
    this.joints.dispose();
    this.bones.dispose();
    this.joints.material.dispose();
    this.bones.material.dispose();
  }
}

// A polyline of the last `capacity` points (a root's path on the ground).
export class Trail {
  constructor(viewer, color, capacity = 600, opacity = 0.7) {
    this.viewer = viewer;
    this.capacity = capacity;
    this.points = [];
    this.geometry = new THREE.BufferGeometry();
    this.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * capacity), 3));
    this.line = new THREE.Line(this.geometry, new THREE.LineBasicMaterial({ color, transparent: true, opacity }));
    this.line.frustumCulled = false;
    viewer.scene.add(this.line);
  }

  push(x, y, z) {
    const last = this.points[this.points.length - 1];
    if (last && Math.hypot(last[0] - x, last[2] - z) < 0.01) return;
    this.points.push([x, y, z]);
    if (this.points.length > this.capacity) this.points.shift();
    this.set(this.points);
  }

  set(points) {
    const a = this.geometry.attributes.position.array;
    const n = Math.min(points.length, this.capacity);
    for (let i = 0; i < n; i++) a.set(points[points.length - n + i], 3 * i);
    this.geometry.attributes.position.needsUpdate = true;
    this.geometry.setDrawRange(0, n);
  }

  clear() { this.points = []; this.geometry.setDrawRange(0, 0); }

  dispose() { this.viewer.scene.remove(this.line); this.geometry.dispose(); }
}

// Predicted trajectory (points and a line), desired trajectory (where the
// input's velocity leads, dashed), desired velocity and facing, current
// facing, foot locks: what character_state says about the controller.
export class TrajectoryView {
  constructor(viewer) {
    this.viewer = viewer;
    this.group = new THREE.Group();
    this.predicted = new Trail(viewer, 0xffd54f, 16, 1.0);
    this.group.add(this.predicted.line);
    this.dots = [];
    for (let i = 0; i < 8; i++) {
      const dot = new THREE.Mesh(new THREE.SphereGeometry(0.045, 12, 8), new THREE.MeshBasicMaterial({ color: 0xffd54f }));
      dot.visible = false;
      this.dots.push(dot);
      this.group.add(dot);
    }
    this.desiredGeometry = new THREE.BufferGeometry();
    this.desiredGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * 9), 3));
    this.desired = new THREE.Line(this.desiredGeometry,
      new THREE.LineDashedMaterial({ color: 0xff7043, dashSize: 0.12, gapSize: 0.08 }));
    this.desired.frustumCulled = false;
    this.desiredDots = [];
    for (let i = 0; i < 8; i++) {
      const ring = new THREE.Mesh(new THREE.RingGeometry(0.035, 0.055, 16).rotateX(-Math.PI / 2),
        new THREE.MeshBasicMaterial({ color: 0xff7043, side: THREE.DoubleSide }));
      ring.visible = false;
      this.desiredDots.push(ring);
      this.group.add(ring);
    }
    this.group.add(this.desired);
    // A foot lock: a square frame where a planted foot is held.
    this.locks = [];
    for (let i = 0; i < 4; i++) {
      const lock = new THREE.Mesh(new THREE.RingGeometry(0.07, 0.1, 4, 1).rotateZ(Math.PI / 4).rotateX(-Math.PI / 2),
        new THREE.MeshBasicMaterial({ color: 0xf06292, side: THREE.DoubleSide }));
      lock.visible = false;
      this.locks.push(lock);
      this.group.add(lock);
    }
    const arrow = (color) => new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, color, 0.16,
      0.09);
    this.desiredVelocity = arrow(0xff7043);
    this.desiredFacing = arrow(0xab47bc);
    this.facing = arrow(0x26c6da);
    this.group.add(this.desiredVelocity, this.desiredFacing, this.facing);
    viewer.scene.add(this.group);
  }

  // state: CharacterStateResponse (world space); times: seconds of the
  // trajectory samples ahead (the schema's frame offsets / frame rate).
  update(state, headingOf, times = []) {
    const p = state.position || { x: 0, y: 0, z: 0 };
    const trajectory = (state.trajectory || []).map((t) => [t.x, 0.02, t.z]);
    this.predicted.set([[p.x, 0.02, p.z], ...trajectory]);
    this.dots.forEach((dot, i) => {
      dot.visible = i < trajectory.length;
      if (dot.visible) dot.position.set(...trajectory[i]);
    });
    const dv = state.desired_velocity || { x: 0, z: 0 };
    const desired = [[p.x, 0.025, p.z], ...times.slice(0, 8).map((t) => [p.x + dv.x * t, 0.025, p.z + dv.z * t])];
    const a = this.desiredGeometry.attributes.position.array;
    desired.forEach((q, i) => a.set(q, 3 * i));
    this.desiredGeometry.attributes.position.needsUpdate = true;
    this.desiredGeometry.setDrawRange(0, desired.length);
    this.desired.computeLineDistances();
    this.desiredDots.forEach((ring, i) => {
      ring.visible = i + 1 < desired.length;
      if (ring.visible) ring.position.set(...desired[i + 1]);
    });
    this.locks.forEach((lock, i) => {
      const foot = (state.feet || [])[i];
      lock.visible = !!(foot && foot.locked);
      if (lock.visible) lock.position.set(foot.position.x, 0.006, foot.position.z);
    });
    const base = new THREE.Vector3(p.x, 0.03, p.z);
    const v = state.desired_velocity || { x: 0, z: 0 };
    const speed = Math.hypot(v.x, v.z);
    this.desiredVelocity.visible = speed > 0.02;
    if (speed > 0.02) {
      this.desiredVelocity.position.copy(base);
      this.desiredVelocity.setDirection(new THREE.Vector3(v.x / speed, 0, v.z / speed));
      this.desiredVelocity.setLength(Math.max(speed, 0.3), 0.16, 0.09);
    }
    const set = (arrowHelper, h, y, length) => {
      arrowHelper.position.set(p.x, y, p.z);
      arrowHelper.setDirection(new THREE.Vector3(Math.sin(h), 0, Math.cos(h)));
      arrowHelper.setLength(length, 0.12, 0.07);
    };
    set(this.desiredFacing, headingOf(state.desired_rotation), 0.06, 0.7);
    set(this.facing, headingOf(state.rotation), 0.09, 0.55);
  }

  setVisible(v) { this.group.visible = v; }
}

// Footprints: a flat mark where a contact bone touched down, fading out.
export class Footprints {
  constructor(viewer, capacity = 48) {
    this.viewer = viewer;
    this.marks = [];
    this.capacity = capacity;
    this.geometry = new THREE.CircleGeometry(0.06, 20).rotateX(-Math.PI / 2);
  }

  add(x, z, color) {
    const mark = new THREE.Mesh(this.geometry, new THREE.MeshBasicMaterial({ color, transparent: true, opacity: 0.8 }));
    mark.position.set(x, 0.003, z);
    this.viewer.scene.add(mark);
    this.marks.push(mark);
    if (this.marks.length > this.capacity) this.viewer.scene.remove(this.marks.shift());
    this.marks.forEach((m, i) => { m.material.opacity = 0.15 + 0.65 * (i + 1) / this.marks.length; });
  }

  clear() { for (const m of this.marks) this.viewer.scene.remove(m); this.marks = []; }
}

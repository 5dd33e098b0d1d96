// arrows.js: a row of motion-matching features drawn in the view: each
// feature bone's position as an arrow from the character's root to it, its
// velocity as an arrow from that position (from the root when the schema
// has no position of that bone, as the default's Hips; VELOCITY_ARROW_S
// seconds of it),
// the trajectory's points on the ground with their directions. The row is a
// normalized one (a recorded query, a candidate's features from search with
// include_features), denormalized here with the schema's offset and scale
// (raw = normalized x scale + offset, core/database/feature.h); features
// are in character space (core/offline/feature_build.c: relative to bone 0,
// rotated into its frame), so `anchor` (a world position and rotation)
// places them: the character's root at a tick, or a ghost's.
//
// What it does not: fetch anything (ghosts.js asks the server), or draw the
// inertialization terms (not positions).
import * as THREE from 'three';

export const VELOCITY_ARROW_S = 0.2; // a velocity arrow is where the bone is this many seconds later
export const DIRECTION_ARROW_M = 0.25; // a trajectory direction's arrow length

const KIND = { BONE_POSITION: 0, BONE_VELOCITY: 1, TRAJECTORY_POSITION: 2, TRAJECTORY_DIRECTION: 3 };
const kindOf = (k) => (typeof k === 'number' ? k : KIND[String(k).replace('FEATURE_', '')]);

// The raw (denormalized) values of a group's columns.
export function denormalize(group, row) {
  return Array.from({ length: group.dims }, (_, j) => row[group.first_column + j] * group.scale[j] + group.offset[j]);
}

export class FeatureArrows {
  constructor(viewer, color) {
    this.viewer = viewer;
    this.color = color;
    this.group = new THREE.Group();
    this.arrows = []; // ArrowHelpers, reused
    this.dots = []; // trajectory points
    this.items = []; // what each arrow stands for: {group, kind, bone, sample}
    this.trajectory = new THREE.Line(new THREE.BufferGeometry(), new THREE.LineBasicMaterial({ color, transparent: true,
      opacity: 0.8 }));
    this.trajectory.frustumCulled = false;
    this.group.add(this.trajectory);
    viewer.scene.add(this.group);
  }

  arrow(i) {
    while (this.arrows.length <= i) {
      const a = new THREE.ArrowHelper(new THREE.Vector3(0, 1, 0), new THREE.Vector3(), 1, this.color, 0.06, 0.035);
      this.arrows.push(a);
      this.group.add(a);
    }
    return this.arrows[i];
  }

  dot(i) {
    while (this.dots.length <= i) {
      const d = new THREE.Mesh(new THREE.SphereGeometry(0.035, 10, 6), new THREE.MeshBasicMaterial({ color: this.color }));
      this.dots.push(d);
      this.group.add(d);
    }
    return this.dots[i];
  }

  // features: DescribeDatabaseResponse.features; row: a normalized feature
  // row; anchor: {position: [x, y, z], rotation: [w, x, y, z]} in the world.
  update(features, row, anchor) {
    const q = new THREE.Quaternion(anchor.rotation[1], anchor.rotation[2], anchor.rotation[3], anchor.rotation[0]);
    const origin = new THREE.Vector3(...anchor.position);
    const world = (x, y, z) => new THREE.Vector3(x, y, z).applyQuaternion(q).add(origin);
    const positions = {}; // bone -> its world position (where its velocity starts)
    let n = 0, dots = 0;
    this.items = [];
    const draw = (from, to, item) => {
      const a = this.arrow(n++);
      const d = to.clone().sub(from);
      const length = d.length();
      a.visible = length > 1e-4;
      a.position.copy(from);
      if (a.visible) {
        a.setDirection(d.divideScalar(length));
        const head = Math.min(0.06, 0.4 * length);
        a.setLength(length, head, 0.6 * head);
      }
      this.items.push(item);
    };
    for (const g of features) {
      if (kindOf(g.kind) === KIND.BONE_POSITION) positions[g.bone] = world(...denormalize(g, row));
    }
    let trajectory = [];
    features.forEach((g, gi) => {
      const raw = denormalize(g, row);
      const kind = kindOf(g.kind);
      if (kind === KIND.BONE_POSITION) {
        draw(origin, positions[g.bone], { group: gi, kind: 'position', bone: g.bone });
      } else if (kind === KIND.BONE_VELOCITY) {
        const from = positions[g.bone] || origin;
        const to = from.clone().add(new THREE.Vector3(...raw).multiplyScalar(VELOCITY_ARROW_S).applyQuaternion(q));
        draw(from, to, { group: gi, kind: 'velocity', bone: g.bone });
      } else if (kind === KIND.TRAJECTORY_POSITION) {
        trajectory = g.frame_offsets.map((_, k) => world(raw[2 * k], 0.03, raw[2 * k + 1]));
        trajectory.forEach((p, k) => {
          const d = this.dot(dots++);
          d.visible = true;
          d.position.copy(p);
          d.userData = { group: gi, sample: k };
        });
      }
    });
    // Directions at the trajectory's points (after them in the schema or not).
    features.forEach((g, gi) => {
      if (kindOf(g.kind) !== KIND.TRAJECTORY_DIRECTION) return;
      const raw = denormalize(g, row);
      g.frame_offsets.forEach((_, k) => {
        const from = trajectory[k] || origin.clone();
        const dir = new THREE.Vector3(raw[2 * k], 0, raw[2 * k + 1]).applyQuaternion(q);
        const len = dir.length();
        draw(from, from.clone().add(dir.multiplyScalar(len > 1e-6 ? DIRECTION_ARROW_M / len : 0)),
          { group: gi, kind: 'direction', sample: k });
      });
    });
    for (let i = n; i < this.arrows.length; i++) this.arrows[i].visible = false;
    for (let i = dots; i < this.dots.length; i++) this.dots[i].visible = false;
    this.trajectory.geometry.setFromPoints([origin.clone().setY(0.03), ...trajectory]);
    this.group.visible = true;
  }

  // What is drawn, read back from the arrows and points themselves: each
  // arrow's item with its base and tip in world space, and the trajectory's
  // points.
  drawn() {
    this.group.updateMatrixWorld(true);
    const arrows = this.items.map((item, i) => {
      const a = this.arrows[i];
      const base = a.getWorldPosition(new THREE.Vector3());
      const tip = a.visible ? a.localToWorld(new THREE.Vector3(0, a.cone.position.y, 0)) : base;
      return { ...item, base: base.toArray(), tip: tip.toArray() };
    });
    const points = this.dots.filter((d) => d.visible).map((d) => ({ ...d.userData, at: d.position.toArray() }));
    return { arrows, points };
  }

  setVisible(v) { this.group.visible = v; }

  dispose() {
    this.viewer.scene.remove(this.group);
    this.group.traverse((o) => { if (o.geometry) o.geometry.dispose(); if (o.material) o.material.dispose(); });
  }
}

// crowdview.js: a whole crowd in three draw calls: every character's bones
// as one LineSegments, its root as one Points, both in the character's
// colour, and the chosen character also as a full Rig. Labels are DOM tags
// for the few that matter (the chosen one, the one under the pointer, and all
// of them while the crowd is small). A click picks the character whose root
// is nearest on screen.
//
// Why: a Rig per character is two instanced meshes plus a trail, three or
// more draw calls each; at 1,000 characters the page drew about one frame a
// second under software rendering.
import * as THREE from 'three';
import { Rig } from './viewer.js';

const LABELS_ALL_BELOW = 24; // crowds this small are all labelled
const PICK_PX = 18;          // a click picks a root within this many pixels

export class CrowdView {
  constructor(viewer, overlay) {
    this.viewer = viewer;
    this.overlay = overlay;
    this.bones = new THREE.LineSegments(new THREE.BufferGeometry(),
      new THREE.LineBasicMaterial({ vertexColors: true }));
    this.roots = new THREE.Points(new THREE.BufferGeometry(),
      new THREE.PointsMaterial({ vertexColors: true, size: 7, sizeAttenuation: false }));
    this.bones.frustumCulled = this.roots.frustumCulled = false;
    viewer.scene.add(this.bones, this.roots);
    this.capacity = { segments: 0, roots: 0 };
    this.reserve(1, 1);
    this.entries = [];
    this.chosen = null;      // { id, rig }
    this.hovered = null;
    this.labels = new Map(); // id -> element
    this.color = new THREE.Color();
    this.v = new THREE.Vector3();
  }

  // Buffers for at least this many segments and roots (grown by half again).
  reserve(segments, roots) {
    const grow = (geometry, name, count, size) => {
      const attribute = new THREE.BufferAttribute(new Float32Array(size * count), size);
      attribute.setUsage(THREE.DynamicDrawUsage);
      geometry.setAttribute(name, attribute);
    };
    if (segments > this.capacity.segments) {
      const n = Math.ceil(segments * 1.5) + 64;
      grow(this.bones.geometry, 'position', 2 * n, 3);
      grow(this.bones.geometry, 'color', 2 * n, 3);
      this.capacity.segments = n;
    }
    if (roots > this.capacity.roots) {
      const n = Math.ceil(roots * 1.5) + 16;
      grow(this.roots.geometry, 'position', n, 3);
      grow(this.roots.geometry, 'color', n, 3);
      this.capacity.roots = n;
    }
  }

  // entries: the crowd's entries to draw now ({ id, color, joints (Float32Array of world positions),
  // skeleton: { parents }, label, frames }, gone ones left out), the same objects from frame to frame.
  // layout: whether the list changed since the last call (who is drawn, in what order): only then are
  // the colours and each entry's place in the buffers written again; a pose is written when its entry
  // has a frame not drawn yet (entry.frames). Nothing is allocated unless the buffers grow.
  update(entries, layout) {
    const bones = this.bones.geometry, roots = this.roots.geometry;
    if (layout || entries !== this.entries) {
      this.entries = entries;
      let segments = 0;
      for (const e of entries) segments += e.skeleton.parents.length - 1;
      this.reserve(segments, entries.length);
      const bc = bones.attributes.color.array, rc = roots.attributes.color.array;
      let s = 0;
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i], c = this.color.setHex(e.color), n = e.skeleton.parents.length - 1;
        e.slot = s, e.drawn = -1;
        for (let o = 6 * s, end = 6 * (s + n); o < end; o += 3) bc[o] = c.r, bc[o + 1] = c.g, bc[o + 2] = c.b;
        rc[3 * i] = c.r, rc[3 * i + 1] = c.g, rc[3 * i + 2] = c.b;
        s += n;
      }
      bones.setDrawRange(0, 2 * s);
      roots.setDrawRange(0, entries.length);
      bones.attributes.color.needsUpdate = roots.attributes.color.needsUpdate = true;
    }
    const bp = bones.attributes.position.array, rp = roots.attributes.position.array;
    let moved = false;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.drawn === e.frames) continue;
      e.drawn = e.frames, moved = true;
      const g = e.joints, parents = e.skeleton.parents;
      // A root (parent -1) below bone 0 draws as a point on itself.
      for (let b = 1, o = 6 * e.slot; b < parents.length; b++, o += 6) {
        const p = parents[b] < 0 ? b : parents[b];
        bp[o] = g[3 * p], bp[o + 1] = g[3 * p + 1], bp[o + 2] = g[3 * p + 2];
        bp[o + 3] = g[3 * b], bp[o + 4] = g[3 * b + 1], bp[o + 5] = g[3 * b + 2];
      }
      rp[3 * i] = g[0], rp[3 * i + 1] = 0.02, rp[3 * i + 2] = g[2];
      if (this.chosen && this.chosen.id === e.id) this.chosen.rig.update(g);
    }
    if (moved) bones.attributes.position.needsUpdate = roots.attributes.position.needsUpdate = true;
  }

  // Screen position (CSS pixels in the canvas) of a world point, or null behind the camera.
  screenOf(x, y, z) {
    const canvas = this.viewer.renderer.domElement;
    this.v.set(x, y, z).project(this.viewer.camera);
    if (this.v.z > 1) return null;
    return [(this.v.x + 1) / 2 * canvas.clientWidth, (1 - this.v.y) / 2 * canvas.clientHeight];
  }

  // The entry whose root is nearest (x, y) on screen, within PICK_PX, or null.
  pick(x, y) {
    let best = null, bestD = PICK_PX;
    for (const e of this.entries) {
      const head = e.skeleton.parents.length > 1 ? 1 : 0; // the hips: bone 0 is on the ground
      const p = this.screenOf(e.joints[3 * head], e.joints[3 * head + 1], e.joints[3 * head + 2]);
      if (!p) continue;
      const d = Math.hypot(p[0] - x, p[1] - y);
      if (d < bestD) best = e, bestD = d;
    }
    return best;
  }

  choose(entry) {
    if (this.chosen) this.chosen.rig.dispose();
    this.chosen = entry ? { id: entry.id, rig: new Rig(this.viewer, entry.skeleton.parents, 0xffffff) } : null;
    if (entry) this.chosen.rig.update(entry.joints);
  }

  // Tags above the heads of the chosen, the hovered and (a small crowd) every character.
  drawLabels() {
    const wanted = new Map();
    const small = this.entries.length < LABELS_ALL_BELOW;
    for (const e of this.entries) {
      if (!small && e.id !== (this.chosen && this.chosen.id) && e !== this.hovered) continue;
      const g = e.joints;
      let top = 0;
      for (let b = 0; b < e.skeleton.parents.length; b++) top = Math.max(top, g[3 * b + 1]);
      const p = this.screenOf(g[0], top + 0.25, g[2]);
      if (p) wanted.set(e.id, { p, e });
    }
    for (const [id, el] of this.labels) if (!wanted.has(id)) { el.remove(); this.labels.delete(id); }
    for (const [id, { p, e }] of wanted) {
      let el = this.labels.get(id);
      if (!el) {
        el = document.createElement('div');
        el.className = 'crowd-label';
        this.overlay.appendChild(el);
        this.labels.set(id, el);
      }
      el.textContent = e.label;
      el.classList.toggle('chosen', this.chosen !== null && this.chosen.id === id);
      el.style.transform = `translate(${p[0].toFixed(1)}px, ${p[1].toFixed(1)}px) translate(-50%, -100%)`;
    }
  }

  clear() {
    this.choose(null);
    this.hovered = null;
    this.update([], true);
    for (const el of this.labels.values()) el.remove();
    this.labels.clear();
  }
}

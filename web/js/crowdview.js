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

  // entries: [{ id, color, joints (Float32Array of world positions), parents, label }],
  // the characters to draw now (gone ones left out).
  update(entries) {
    this.entries = entries;
    let segments = 0;
    for (const e of entries) segments += e.parents.length - 1;
    this.reserve(segments, entries.length);
    const bp = this.bones.geometry.attributes.position.array, bc = this.bones.geometry.attributes.color.array;
    const rp = this.roots.geometry.attributes.position.array, rc = this.roots.geometry.attributes.color.array;
    let s = 0, r = 0;
    for (const e of entries) {
      const g = e.joints, c = this.color.setHex(e.color);
      for (let b = 1; b < e.parents.length; b++) {
        const p = e.parents[b];
        if (p < 0) continue;
        const o = 6 * s++;
        bp[o] = g[3 * p], bp[o + 1] = g[3 * p + 1], bp[o + 2] = g[3 * p + 2];
        bp[o + 3] = g[3 * b], bp[o + 4] = g[3 * b + 1], bp[o + 5] = g[3 * b + 2];
        bc[o] = bc[o + 3] = c.r, bc[o + 1] = bc[o + 4] = c.g, bc[o + 2] = bc[o + 5] = c.b;
      }
      const o = 3 * r++;
      rp[o] = g[0], rp[o + 1] = 0.02, rp[o + 2] = g[2];
      rc[o] = c.r, rc[o + 1] = c.g, rc[o + 2] = c.b;
      if (this.chosen && this.chosen.id === e.id) this.chosen.rig.update(g);
    }
    this.bones.geometry.setDrawRange(0, 2 * s);
    this.roots.geometry.setDrawRange(0, r);
    this.bones.geometry.attributes.position.needsUpdate = this.bones.geometry.attributes.color.needsUpdate = true;
    this.roots.geometry.attributes.position.needsUpdate = this.roots.geometry.attributes.color.needsUpdate = true;
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
      const head = e.parents.length > 1 ? 1 : 0; // the hips: bone 0 is on the ground
      const p = this.screenOf(e.joints[3 * head], e.joints[3 * head + 1], e.joints[3 * head + 2]);
      if (!p) continue;
      const d = Math.hypot(p[0] - x, p[1] - y);
      if (d < bestD) best = e, bestD = d;
    }
    return best;
  }

  choose(entry) {
    if (this.chosen) this.chosen.rig.dispose();
    this.chosen = entry ? { id: entry.id, rig: new Rig(this.viewer, entry.parents, 0xffffff) } : null;
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
      for (let b = 0; b < e.parents.length; b++) top = Math.max(top, g[3 * b + 1]);
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
    this.update([]);
    for (const el of this.labels.values()) el.remove();
    this.labels.clear();
  }
}

"""The training data of one database: its arrays as `animdb arrays` wrote them
(the core's own loader read the .animdb, so there is one definition of the
format), turned into the decompressor's pose rows, the compressor's inputs and
the windows the networks train on.

Pose row Y (what decompressor.bin outputs, core/learned/lmm.h's layout for
B bones and C contacts, 15 (B - 1) + 6 + C floats): local positions,
rotations as the first two matrix columns (m00 m01 m10 m11 m20 m21), local
velocities and angular velocities of bones 1..B-1, the root's velocity and
angular velocity in its own frame, the contact flags. X: the database's own
normalized matching features (the server normalizes queries with the same
offsets and scales, stored in the database).
"""
import json
import os
import subprocess

import numpy as np

import kinematics

# Below these the trainer refuses a database (the reason is printed).
MIN_FRAMES = 240          # 4 s at 60 Hz: fewer cannot fill a batch of distinct windows
STEPPER_WINDOW = 20       # frames the stepper rolls out (the reference's)
MAX_BONES = 64            # ANIM_LMM_MAX_BONES
MAX_STATE = 64            # ANIM_LMM_MAX_STATE


class Refused(Exception):
    """The database cannot be trained on; str() says why."""


def export(database, out_dir, animdb):
    """Runs `animdb arrays` on database (a .animdb path, or "default" for the
    embedded procedural one) into out_dir."""
    args = [animdb, "arrays", "--procgen" if database == "default" else database, "-o", out_dir]
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise Refused(done.stderr.strip() or "animdb arrays failed (%d)" % done.returncode)


class Database:
    """The arrays of one exported database, checked for training."""

    def __init__(self, arrays_dir, latent):
        with open(os.path.join(arrays_dir, "meta.json")) as f:
            self.meta = json.load(f)
        load = lambda name: np.load(os.path.join(arrays_dir, name + ".npy"))
        m = self.meta
        self.name, self.version = m["name"], m["version"]
        self.frame_rate = float(m["frame_rate"])
        self.dt = 1.0 / self.frame_rate
        self.parents = [b["parent"] for b in m["bones"]]
        self.bone_names = [b["name"] for b in m["bones"]]
        self.nbones = len(self.parents)
        self.contact_bones = m["contact_bones"]
        self.features = load("features").astype(np.float32)
        self.ranges = load("ranges")
        nframes = int(m["frames"])
        # Refusals first, each naming the reason.
        if nframes < MIN_FRAMES:
            raise Refused("database \"%s\" has %d frames; training needs at least %d (%.1f s at %g Hz)"
                          % (self.name, nframes, MIN_FRAMES, MIN_FRAMES / self.frame_rate, self.frame_rate))
        if not self.contact_bones:
            raise Refused("database \"%s\" has no contact bones: the decompressor learns contacts (feet), "
                          "rebuild it with toes the builder finds (animdb build --bone toe-left=NAME ...)" % self.name)
        contacts = load("contacts")
        if not contacts.any():
            raise Refused("database \"%s\": its contact flags are never on (no foot ever plants)" % self.name)
        if self.features.ndim != 2 or self.features.shape[1] == 0:
            raise Refused("database \"%s\" has no matching features" % self.name)
        if self.nbones > MAX_BONES:
            raise Refused("database \"%s\" has %d bones; learned characters take at most %d" % (self.name, self.nbones, MAX_BONES))
        if self.features.shape[1] + latent > MAX_STATE:
            raise Refused("database \"%s\": %d features + %d latent exceed the server's state of %d"
                          % (self.name, self.features.shape[1], latent, MAX_STATE))
        lengths = self.ranges[:, 1] - self.ranges[:, 0]
        if lengths.max() <= STEPPER_WINDOW:
            raise Refused("database \"%s\": no clip longer than the stepper's window of %d frames" % (self.name, STEPPER_WINDOW))
        self.nframes = nframes
        self.nfeatures = self.features.shape[1]
        # The memory the server's database takes, as `animdb info` counts it
        # (tools/animdb.c sizes_of): eight vec3/quat arrays per frame and bone,
        # the feature rows plus offset and scale, a byte per contact (the
        # ranges, under 0.01%, left out). The networks' default size is a
        # tenth of it (learned motion matching's point: memory that does not
        # grow with the data).
        self.memory_bytes = (nframes * self.nbones * (6 * 12 + 2 * 16) + (nframes + 2) * self.nfeatures * 4
                             + nframes * len(self.contact_bones))

        lp, lr = load("local_positions"), load("local_rotations")
        lv, la = load("local_velocities"), load("local_angular_velocities")
        B = self.nbones
        root_inv = kinematics.np_quat_to_matrix(lr[:, 0]).transpose(0, 2, 1)
        rvel = np.einsum("fij,fj->fi", root_inv, lv[:, 0])
        rang = np.einsum("fij,fj->fi", root_inv, la[:, 0])
        mats = kinematics.np_quat_to_matrix(lr[:, 1:])                     # F, B-1, 3, 3
        txy = mats[..., :2].reshape(nframes, B - 1, 6)
        self.y_parts = dict(pos=lp[:, 1:], txy=txy, vel=lv[:, 1:], ang=la[:, 1:], rvel=rvel, rang=rang,
                            con=contacts.astype(np.float32))
        self.Y = np.concatenate([self.y_parts[k].reshape(nframes, -1) for k in
                                 ("pos", "txy", "vel", "ang", "rvel", "rang", "con")], axis=1).astype(np.float32)
        self.npose = self.Y.shape[1]
        assert self.npose == 15 * (B - 1) + 6 + len(self.contact_bones)
        # Character space (the root at the origin, facing +Z, moving as it does).
        q = kinematics.np_fk(lp[:, 1:], mats, lv[:, 1:], la[:, 1:], rvel, rang, self.parents)
        self.q_parts = q
        self.C = np.concatenate([self.Y[:, :12 * (B - 1)], q["pos"].reshape(nframes, -1),
                                 q["txy"].reshape(nframes, -1), q["vel"].reshape(nframes, -1),
                                 q["ang"].reshape(nframes, -1)], axis=1).astype(np.float32)
        # Windows that stay inside one clip.
        self.pair_starts = self._starts(2)
        self.window_starts = self._starts(STEPPER_WINDOW)

    def _starts(self, window):
        starts = [np.arange(a, b - window + 1) for a, b in self.ranges if b - a >= window]
        return np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)

    def stats(self, values, floor):
        """Per-column mean and std (std floored, for dividing)."""
        mean = values.mean(axis=0)
        std = values.std(axis=0)
        return mean.astype(np.float32), np.maximum(std, floor).astype(np.float32), std.astype(np.float32)

"""Learned motion matching trained on a database, the whole pipeline
(issue 37): tools/lmm_train on the embedded default database -> the three
network files -> the real server loads them (--lmm-default, and NAME.lmm/
beside a database file) -> learned characters stream with constant bone
lengths. Also: databases the trainer cannot use are refused with the
reason; the trainer is deterministic given its seed and a resumed run
writes the same bytes as an uninterrupted one; networks that do not fit a
database are refused at load naming the mismatch, and half a set is never
loaded. A tiny run (small networks, a few hundred steps): it checks the
pipeline, not the quality (docs/lmm_train.md has the real figures).
Runs under CI=true like everything else (PyTorch is a test dependency)."""
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import BUILD, ROOT, Server, animserver, check  # noqa: E402
import numpy as np  # noqa: E402

ANIMDB = os.path.join(BUILD, "animdb")
TRAIN = [sys.executable, os.path.join(ROOT, "tools", "lmm_train")]
SHARED = os.environ.get("ANIM_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
# Small networks: the pipeline in seconds on two cores.
TINY = ["--hidden", "32", "--latent", "8", "--log-every", "10", "--eval-every", "20", "--checkpoint-every", "7"]
RUN = ["--hidden", "64", "--latent", "16", "--decompressor-steps", "400", "--stepper-steps", "100",
       "--projector-steps", "300", "--log-every", "100", "--eval-every", "400"]
BONE_LENGTH_M = 1e-4  # bone lengths over a stream: constant to float rounding
FILES = ("projector.bin", "stepper.bin", "decompressor.bin")


def train(database, out, *args):
    return subprocess.run(TRAIN + [database, out, "--animdb", ANIMDB] + list(args), capture_output=True, text=True)


def digest(folder):
    return {f: hashlib.sha256(open(os.path.join(folder, f), "rb").read()).hexdigest() for f in FILES}


def bvh(path, frames, toes=True):
    """A small two-legged BVH: Hips walking forward at 0.9 m/s, legs swinging."""
    s = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 90 0",
         "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
         "JOINT Spine", "{", "OFFSET 0 10 0", "CHANNELS 3 Zrotation Xrotation Yrotation",
         "End Site", "{", "OFFSET 0 10 0", "}", "}"]
    for side, x in (("Left", 10), ("Right", -10)):
        s += ["JOINT %sUpLeg" % side, "{", "OFFSET %d -5 0" % x, "CHANNELS 3 Zrotation Xrotation Yrotation",
              "JOINT %sLeg" % side, "{", "OFFSET 0 -40 0", "CHANNELS 3 Zrotation Xrotation Yrotation",
              "JOINT %sFoot" % side, "{", "OFFSET 0 -40 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
        if toes:
            s += ["JOINT %sToe" % side, "{", "OFFSET 0 -5 10", "CHANNELS 3 Zrotation Xrotation Yrotation",
                  "End Site", "{", "OFFSET 0 0 5", "}", "}"]
        else:
            s += ["End Site", "{", "OFFSET 0 -5 10", "}"]
        s += ["}", "}", "}"]
    s += ["}", "MOTION", "Frames: %d" % frames, "Frame Time: 0.0166667"]
    per_leg = 4 if toes else 3
    for f in range(frames):
        v = [0.0, 90.0, f * 1.5, 0.0, 0.0, 0.0] + [0.0] * (3 * (1 + 2 * per_leg))
        v[6 + 3 + 1] = 30 * math.sin(f * 0.1)
        v[6 + 3 * (1 + per_leg) + 1] = -30 * math.sin(f * 0.1)
        s.append(" ".join("%g" % x for x in v))
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")


def build(out, *inputs):
    done = subprocess.run([ANIMDB, "build", "-o", out] + list(inputs), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_refusals(work):
    bvh(os.path.join(work, "short.bvh"), 60)
    bvh(os.path.join(work, "still.bvh"), 600, toes=False)
    build(os.path.join(work, "short.animdb"), os.path.join(work, "short.bvh"))
    build(os.path.join(work, "still.animdb"), os.path.join(work, "still.bvh"))
    r = train(os.path.join(work, "short.animdb"), os.path.join(work, "short.lmm"), *TINY)
    check(r.returncode == 1 and "has 60 frames; training needs at least 240" in r.stderr,
          "a 60-frame database refused with the reason: " + r.stderr.strip())
    r = train(os.path.join(work, "still.animdb"), os.path.join(work, "still.lmm"), *TINY)
    check(r.returncode == 1 and "contact flags are never on" in r.stderr,
          "a database whose feet never plant refused with the reason: " + r.stderr.strip())
    r = train(os.path.join(work, "absent.animdb"), os.path.join(work, "absent.lmm"), *TINY)
    check(r.returncode == 1 and "absent.animdb" in r.stderr, "a missing file refused naming it")
    check(not any(os.path.exists(os.path.join(work, d, f)) for d in ("short.lmm", "still.lmm") for f in FILES),
          "no network files written for a refused database")


def test_determinism(work):
    a, b, c = (os.path.join(work, n) for n in ("seed-a", "seed-b", "seed-c"))
    check(train("default", a, *TINY, "--steps", "20").returncode == 0, "a tiny run of 20 steps per network")
    r = train("default", b, *TINY, "--steps", "20", "--stop-after", "25")
    check(r.returncode == 0 and "stopped early" in r.stderr, "a run stopped after 25 steps (inside the stepper)")
    r = train("default", b, *TINY, "--steps", "20")
    check(r.returncode == 0 and "resumed from" in r.stderr, "... resumed from its checkpoint")
    check(digest(a) == digest(b), "the resumed run wrote the same bytes as the uninterrupted one (same seed)")
    check(train("default", c, *TINY, "--steps", "20", "--seed", "7").returncode == 0, "another seed")
    check(digest(a)["decompressor.bin"] != digest(c)["decompressor.bin"], "... gives other networks")


def test_widths(work):
    """Widths per network; by default the widest whose files fit a tenth of the database's memory."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "lmm_train"))
    import networks  # noqa: E402
    r = train("default", os.path.join(work, "bad-widths"), *TINY, "--hidden", "32,0,16")
    check(r.returncode == 2 and "--hidden" in r.stderr, "a zero width refused naming --hidden")
    out = os.path.join(work, "widths")
    r = train("default", out, *TINY, "--hidden", "32,24,16", "--steps", "5")
    check(r.returncode == 0, "a run with three widths" + (": " + r.stderr[-300:] if r.returncode else ""))
    widths = {f: [w.shape[1] for w, _ in networks.load_weights(os.path.join(out, f))[1][:-1]] for f in FILES}
    check(widths == {"decompressor.bin": [32], "stepper.bin": [24, 24], "projector.bin": [16] * 4},
          "each network's hidden layers as wide as asked: %s" % widths)
    r = train("default", out, *TINY, "--hidden", "48", "--steps", "5")
    check(r.returncode == 1 and "hidden 32,24,16" in r.stderr and "give hidden 48,48,48" in r.stderr,
          "a checkpoint of other widths refused naming both: " + r.stderr.strip().splitlines()[-1])
    out = os.path.join(work, "default-widths")
    r = train("default", out, "--steps", "2", "--log-every", "1", "--eval-every", "2")
    check(r.returncode == 0, "a run with the default widths" + (": " + r.stderr[-300:] if r.returncode else ""))
    s = json.load(open(os.path.join(out, "train.json")))
    total, budget = sum(s["network_bytes"].values()), s["database_bytes"] / 10.0
    wider = networks.bytes_of(s["features"], s["latent"], 15 * (s["bones"] - 1) + 6 + s["contacts"],
                              *[w + 32 for w in s["hidden"]])
    check(total == networks.bytes_of(s["features"], s["latent"], 15 * (s["bones"] - 1) + 6 + s["contacts"],
                                     *s["hidden"]), "the trainer's size of the files is theirs (%d bytes)" % total)
    check(total <= budget < wider, "default widths %s: %d bytes, within a tenth of the database's %d, 32 wider "
          "would not be (%d)" % (s["hidden"], total, s["database_bytes"], wider))


def bone_lengths(frames, parents):
    """Per frame, character and bone: the distance to its parent (m)."""
    gp = np.stack([f.global_positions for f in frames])           # frames, characters, bones, 3
    return np.linalg.norm(gp[:, :, 2:] - gp[:, :, [parents[b] for b in range(2, len(parents))]], axis=-1)


def stream_learned(client, database, count):
    description = client.describe_database(database)
    parents = [b.parent for b in description.bones]
    ids = list(client.create_characters(database, [{"x": 2.0 * i, "z": 0.0} for i in range(count)],
                                        mode="learned").characters)
    client.set_inputs([animserver.stick(c, 0.0, 0.8) for c in ids])
    stream = client.subscribe(ids, encoding="float", global_positions=True)
    frames = [stream.next(timeout=10.0) for _ in range(120)]
    return description, parents, frames


def check_memory(server, nets):
    """The networks the server holds (its metrics): the projector, the stepper and the trimmed decompressor, within a
    tenth of the database's memory. The full decompressor is released once trimmed: the files' bytes plus a
    quarter of decompressor.bin bound what is held (the trimmed copy is about 2/3 of it, so with the full one kept
    beside it, as before, the server held the files plus that copy plus the shared struct: 10.9% of Bandai Namco's
    memory; without it the files less a third of the decompressor plus the struct's 14 KB)."""
    line = server.proc.stdout.readline().strip()
    check(line.startswith("metrics on "), "the server's metrics address: %r" % line)
    text = urllib.request.urlopen("http://%s/metrics" % line[len("metrics on "):], timeout=10).read().decode()
    held = {m.group(1): int(m.group(2)) for m in
            re.finditer(r'^animserver_lmm_networks_memory_bytes\{database="([^"]+)"\} (\d+)$', text, re.M)}
    summary = json.load(open(os.path.join(nets, "train.json")))
    files = sum(os.path.getsize(os.path.join(nets, f)) for f in FILES)
    bound = files + os.path.getsize(os.path.join(nets, "decompressor.bin")) // 4
    for name in ("default", "walk"):
        check(0 < held.get(name, 0) < bound and held[name] <= summary["database_bytes"] / 10.0,
              "database %s: the server holds %s bytes of networks, under %d (the files' %d and a quarter of the "
              "decompressor) and a tenth of the database's %d" % (name, held.get(name), bound, files,
                                                                   summary["database_bytes"]))


def test_serving(work, nets):
    data_dir = os.path.join(work, "data")
    os.makedirs(data_dir)
    # The same procedural database as a file, its networks beside it; and a
    # file whose folder holds two of the three networks.
    subprocess.run([ANIMDB, "build", "--procgen", "--name", "walk", "-o", os.path.join(data_dir, "walk.animdb")],
                   check=True, capture_output=True)
    shutil.copytree(nets, os.path.join(data_dir, "walk.lmm"))
    shutil.copy(os.path.join(data_dir, "walk.animdb"), os.path.join(data_dir, "half.animdb"))
    os.makedirs(os.path.join(data_dir, "half.lmm"))
    for f in FILES[:2]:
        shutil.copy(os.path.join(nets, f), os.path.join(data_dir, "half.lmm", f))
    with Server("--data-dir", data_dir, "--lmm-default", nets, "--db", "walk", "--metrics-port", "0") as server:
        client = animserver.Client(server.host, server.port, client_name="lmm-train")
        check("learned" in client.server.capabilities, "hello: capability learned")
        check_memory(server, nets)
        description, parents, frames = stream_learned(client, "default", 4)
        check(len(description.bones) == 22, "the default database's own skeleton (22 bones, not the reference's 23)")
        check(all(f.global_positions.shape == (4, 22, 3) for f in frames), "120 frames of 4 learned characters")
        lengths = bone_lengths(frames, parents)
        spread = (lengths.max(axis=0) - lengths.min(axis=0)).max(axis=0)
        worst = int(np.argmax(spread))
        check(spread.max() < BONE_LENGTH_M,
              "bone lengths constant over the stream: worst %s varies %.2g m (< %g)"
              % (description.bones[worst + 2].name, spread.max(), BONE_LENGTH_M))
        check(np.isfinite(np.stack([f.global_positions for f in frames])).all(), "every position finite")
        roots = np.stack([f.global_positions[:, 0] for f in frames])
        moved = np.linalg.norm(roots[-1, :, [0, 2]] - roots[0, :, [0, 2]], axis=0)
        check(moved.min() > 0.5, "the stick walks them forward: at least %.2f m in 2 s" % moved.min())
        _, _, frames = stream_learned(client, "walk", 2)
        check(len(frames) == 120 and frames[-1].global_positions.shape == (2, 22, 3),
              "networks beside a database file (walk.lmm/) serve learned characters on it")
        try:
            client.load_database("half")
            check(False, "a database with half a set of networks loaded")
        except animserver.errors.AnimError as e:
            check("decompressor.bin" in e.message and "half.lmm" in e.message,
                  "half a set refused, the database not loaded: " + e.message)
        check("half" not in [d.name for d in client.list_databases().databases], "... and not listed")
        client.close()
    # The reference's networks (23 bones) do not fit the default database (22 bones).
    reference = os.path.join(SHARED, "data", "lmm")
    proc = subprocess.run([os.path.join(BUILD, "animserver"), "--port", "0", "--lmm-default", reference],
                          capture_output=True, text=True, timeout=60)
    check(proc.returncode != 0 and "decompressor.bin gives 338 outputs, database default's 22 bones and 2 contacts "
          "need 323" in proc.stderr, "networks of another skeleton refused at startup naming the mismatch: "
          + proc.stderr.strip().splitlines()[-1])


def main():
    work = tempfile.mkdtemp(prefix="lmm-train-", dir=os.path.join(BUILD, "tests") if os.path.isdir(
        os.path.join(BUILD, "tests")) else None)
    try:
        test_refusals(work)
        test_determinism(work)
        test_widths(work)
        nets = os.path.join(work, "default.lmm")
        r = train("default", nets, *RUN)
        check(r.returncode == 0, "a tiny training run on the default database" + (": " + r.stderr[-400:] if r.returncode else ""))
        summary = json.load(open(os.path.join(nets, "train.json")))
        curve = summary["final_loss"]
        check(all(os.path.getsize(os.path.join(nets, f)) > 0 for f in FILES) and os.path.exists(os.path.join(nets, "loss.svg")),
              "three network files and loss.svg written")
        print("  decompressor joint error after %d steps: %.2f cm; final losses %s"
              % (summary["steps"]["decompressor"], summary["mean_joint_error_cm"], curve))
        test_serving(work, nets)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("lmm train: passed")


if __name__ == "__main__":
    main()

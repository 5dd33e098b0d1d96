#!/usr/bin/env python3
"""`animctl record` checked by a real importer: Debian's Blender (headless, `blender -b`) imports the glTF
and the BVH a recording wrote; the armature has the database's bones and parents, the action a key per
recorded frame, and every bone's world head position at the first, middle and last frame matches the
stream's world positions (the recording file's global_positions) within 1 mm.

Axes and units: the stream, the glTF and the BVH are Y up; Blender is Z up and its importers turn the file
(x, y, z) into (x, -z, y); this test turns Blender's heads back with (x, y, z) -> (x, z, -y). glTF is in
metres; the BVH in centimetres, imported with global_scale 0.01.

Real mocap: a database animdb builds from ../shared/data/mocap/bandai-namco (the procedural one when the
mocap is absent, never under CI=true). Blender missing: skipped, except under CI=true (it is in the test
group of tools/debian-packages.txt). Run by tests/run.sh."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import Server, animserver, check, wait_until  # noqa: E402

BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
SHARED = os.environ.get("ANIM_SHARED_DIR", "../shared")
BLENDER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "blender_bones.py")
TOLERANCE_M = 0.001  # the 1 mm


def run(*args, expect=0):
    result = subprocess.run([os.path.join(BUILD, args[0])] + list(args[1:]), capture_output=True, text=True,
                            timeout=120)
    if result.returncode != expect:
        raise AssertionError(f"{' '.join(args)}: exit {result.returncode} (expected {expect})\n"
                             f"{result.stdout}\n{result.stderr}")
    return result.stdout, result.stderr


def read_recording(path, character):
    """(header, {frame index: global positions, a list of [x, y, z] per bone}) of one character; a frame's
    index counts ticks from the first (the export fills ticks the server skipped, so its frame i is the
    stream's tick first + i)."""
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    header, frames, first = lines[0], {}, None
    for line in lines[1:]:
        for pose in line["poses"]:
            if pose["id"] == character:
                first = line["tick"] if first is None else first
                g = pose["global_positions"]
                frames[(line["tick"] - first) // header["rate_divisor"]] = [g[3 * b:3 * b + 3]
                                                                          for b in range(len(header["bones"]))]
    return header, frames


def blender_import(fmt, path, frames, out_dir):
    out = os.path.join(out_dir, f"blender-{os.path.basename(path)}.json")
    result = subprocess.run(["blender", "-b", "--factory-startup", "--python", BLENDER_SCRIPT, "--", fmt, path, out]
                            + [str(f) for f in frames], capture_output=True, text=True, timeout=300)
    if result.returncode != 0 or not os.path.exists(out):
        raise AssertionError(f"blender import of {path} failed (exit {result.returncode}):\n{result.stdout[-3000:]}"
                             f"\n{result.stderr[-3000:]}")
    with open(out) as f:
        return json.load(f)


def worst_error(imported, header, stream, frames):
    """(metres, bone, frame) of the largest distance between Blender's heads (back to Y up) and the stream."""
    worst = (0.0, None, None)
    for f in frames:
        heads = imported["heads"][str(f)]
        for b, name in enumerate(header["bones"]):
            x, y, z = heads[name]
            sx, sy, sz = stream[f][b]
            d = ((x - sx) ** 2 + (z - sy) ** 2 + (-y - sz) ** 2) ** 0.5
            if d > worst[0]:
                worst = (d, name, f)
    return worst


def check_import(fmt, path, header, stream, data):
    n = max(stream) + 1
    frames = [0, min(stream, key=lambda f: abs(f - n // 2)), n - 1]
    imported = blender_import(fmt.split()[0], path, frames, data)
    check(imported["armatures"] == 1, f"{fmt}: Blender made one armature")
    check(sorted(imported["bones"]) == sorted(header["bones"]), f"{fmt}: the armature has the database's "
          f"{len(header['bones'])} bones, by name")
    parents = {name: (header["bones"][p] if p >= 0 else None) for name, p in zip(header["bones"], header["parents"])}
    check(imported["parents"] == parents, f"{fmt}: each bone's parent is the database's")
    start, end = imported["frame_range"]
    check(imported["keyframes"] == n and round(end - start) == n - 1,
          f"{fmt}: the action has a key per recorded frame ({imported['keyframes']} keys, frames "
          f"{start:g}..{end:g}, {n} recorded)")
    error, bone, frame = worst_error(imported, header, stream, frames)
    check(error < TOLERANCE_M, f"{fmt}: every bone's world position at frames {frames} within 1 mm of the stream "
          f"(worst {error * 1000:.4f} mm, {bone} at frame {frame})")
    return error


def bad_input(port, data):
    out = os.path.join(data, "x.glb")
    _, err = run("animctl", "--port", port, "record", "--create", "1", expect=2)
    check("nothing to write" in err, "record without --gltf, --bvh or -o: a usage error, exit 2")
    _, err = run("animctl", "--port", port, "record", "--create", "2", "--gltf", out, expect=2)
    check("--create 1" in err, "record --create 2: one character is recorded, exit 2")
    _, err = run("animctl", "--port", port, "record", "--create", "1", "--rotations-only", "--gltf", out, expect=2)
    check("--rotations-only" in err, "record --rotations-only: named, exit 2")
    _, err = run("animctl", "--port", port, "record", "--id", "4242", "--gltf", out, expect=1)
    check("4242" in err or "character" in err, f"record of a character that does not exist: exit 1 ({err.strip()})")
    check(not os.path.exists(out), "nothing written for a refused recording")


def gone_during_recording(port, data):
    """A recorded character destroyed by its owner: the recording ends there and what it holds is written
    (exit 0); a recording of it afterwards is refused, naming it."""
    bvh, jsonl = os.path.join(data, "gone.bvh"), os.path.join(data, "gone.jsonl")
    with animserver.Client("127.0.0.1", int(port)) as owner:
        character = owner.create_characters("mocap", [{}]).characters[0]
        record = subprocess.Popen([os.path.join(BUILD, "animctl"), "--port", port, "--json", "record", "--id",
                                   str(character), "--seconds", "60", "--bvh", bvh, "-o", jsonl],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = lambda: sum(1 for _ in open(jsonl)) if os.path.exists(jsonl) else 0  # noqa: E731
        check(wait_until(lambda: lines() > 30, 20), "record --id: frames arrive")
        owner.destroy_characters([character])
        out, err = record.communicate(timeout=30)
    summary = json.loads(out) if record.returncode == 0 else {}
    check(record.returncode == 0 and 25 <= summary.get("frames", 0) < 60 * 60 and os.path.getsize(bvh) > 0,
          f"a character destroyed while recorded ends the recording, written ({summary.get('frames')} frames)")
    _, err = run("animctl", "--port", port, "record", "--id", str(character), "--bvh", bvh, expect=1)
    check(str(character) in err, f"recording it once gone: exit 1, naming it ({err.strip()})")


def main():
    have_blender = shutil.which("blender") is not None
    if not have_blender:
        if os.environ.get("CI") == "true":
            raise AssertionError("blender missing under CI (tools/debian-packages.txt, test group)")
        print("skipped: blender not installed (apt-get install blender)")
        return
    data = tempfile.mkdtemp(prefix="animserver-export-")
    bandai = os.path.join(SHARED, "data", "mocap", "bandai-namco")
    if os.path.isdir(bandai):
        run("animdb", "build", "-o", os.path.join(data, "mocap.animdb"), "--name", "mocap", "--tag", "walk=walk",
            "--tag", "run=run", bandai)
    elif os.environ.get("CI") == "true":
        raise AssertionError(f"{bandai} missing under CI")
    else:
        print("skipped: real mocap not found, recording the procedural database instead")
        run("animdb", "build", "-o", os.path.join(data, "mocap.animdb"), "--procgen", "--name", "mocap")
    with Server("--data-dir", data) as server:
        port = str(server.port)
        run("animctl", "--port", port, "db", "load", "mocap")
        bad_input(port, data)
        gone_during_recording(port, data)
        glb, bvh, jsonl = (os.path.join(data, "walk." + ext) for ext in ("glb", "bvh", "jsonl"))
        out, _ = run("animctl", "--port", port, "--json", "record", "--create", "1", "--database", "mocap",
                     "--input", "script:tour", "--seconds", "4", "--gltf", glb, "--bvh", bvh, "-o", jsonl)
    summary = json.loads(out)
    header, stream = read_recording(jsonl, summary["character"])
    # The server skips a tick when it runs late (a loaded machine): the export fills the frame in, so that
    # its frame i is tick first + i; the comparison below uses the ticks the stream has.
    check(summary["frames"] == max(stream) + 1 >= 200 and summary["filled"] == summary["frames"] - len(stream) and
          summary["bones"] == len(header["bones"]), f"record: {summary['frames']} frames of {summary['bones']} "
          f"bones, one per tick ({len(stream)} streamed, {summary['filled']} filled in over skipped ticks)")
    check(header["database"] == "mocap", "the recording file's header names the database")
    # The recording file exported afterwards (no server): the same bound. Its floats have 6 digits, so the
    # files differ from the live ones in the last places.
    glb2, bvh2 = os.path.join(data, "from.glb"), os.path.join(data, "from.bvh")
    again = json.loads(run("animctl", "--json", "record", "--from", jsonl, "--gltf", glb2, "--bvh", bvh2)[0])
    check(again["frames"] == summary["frames"] and again["character"] == summary["character"] and
          abs(again["frame_time"] - summary["frame_time"]) < 1e-9, "record --from the recording file: the same "
          "character, frames and frame time")
    # A tick the server skipped, made by leaving a frame line out: filled in, the frame count kept.
    skipped = os.path.join(data, "skipped.jsonl")
    with open(jsonl) as f, open(skipped, "w") as out:
        out.writelines(line for i, line in enumerate(f) if i != 100)
    filled = json.loads(run("animctl", "--json", "record", "--from", skipped, "--bvh",
                            os.path.join(data, "skipped.bvh"))[0])
    check(filled["frames"] == summary["frames"] and filled["filled"] == summary["filled"] + 1,
          "record --from a recording missing a tick: the frame filled in (interpolated), frame i is still tick i")
    _, err = run("animctl", "record", "--from", jsonl, "--id", "5", "--bvh", os.path.join(data, "no.bvh"), expect=1)
    check("no frame of character 5" in err and not os.path.exists(os.path.join(data, "no.bvh")),
          "record --from with a character the file does not hold: exit 1, named, nothing written")
    errors = {fmt: check_import(fmt, path, header, stream, data)
              for fmt, path in (("gltf", glb), ("bvh", bvh), ("gltf from the file", glb2), ("bvh from the file", bvh2))}
    print("max error (mm): " + ", ".join(f"{fmt} {e * 1000:.4f}" for fmt, e in errors.items()))
    shutil.rmtree(data, ignore_errors=True)
    print("test_export_blender: passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""python/examples/ run as a user runs them, against a real server: the crowd
agent (100 characters steered to goals, touchdowns logged to CSV) and the
stream recorder (.npz). Checks what each says it produces: goals reached,
touchdowns of both feet in the log at a walking cadence, and the recorded
arrays' shapes with the root walking forward. Run by tests/run.sh."""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import BUILD, ROOT, Server, animserver, check  # noqa: E402

EXAMPLES = os.path.join(ROOT, "python", "examples")
CADENCE = (1.0, 4.0)  # steps per second per walking character (people walk at about 2)


def watch_another_database(work):
    """record_stream.py --id of a character on another database than "default" saves that database's
    skeleton (it described --database, "default" unless given: 22 bones over poses of 23)."""
    clip = os.path.join(os.environ.get("ANIM_SHARED_DIR", "../shared"), "data", "mocap", "bandai-namco",
                        "dataset-1_walk_normal_001.bvh")
    if not os.path.isfile(clip):
        if os.environ.get("CI") == "true":
            raise AssertionError(f"{clip} missing under CI")
        print(f"skipped: {clip} not found (record_stream.py --id on another database)")
        return
    build = subprocess.run([os.path.join(BUILD, "animdb"), "build", "-o", os.path.join(work, "walk.animdb"), clip],
                           capture_output=True, text=True, timeout=60)
    check(build.returncode == 0, "animdb builds a one-clip database" + (f": {build.stderr}" if build.returncode else ""))
    out = os.path.join(work, "watched.npz")
    with Server("--data-dir", work, "--db", "walk") as server, animserver.Client("127.0.0.1", server.port) as owner:
        watched = owner.create_characters("walk", [{}]).characters[0]
        rec = subprocess.run([sys.executable, os.path.join(EXAMPLES, "record_stream.py"), "--port", str(server.port),
                              "--id", str(watched), "--seconds", "0.5", "-o", out],
                             capture_output=True, text=True, timeout=60)
        check(rec.returncode == 0, "record_stream.py --id runs" + (f": {rec.stderr[-800:]}" if rec.returncode else ""))
    d = np.load(out)
    nbones = d["positions"].shape[2]
    check(nbones == 23 and d["parents"].shape == (nbones,) and d["bone_names"].shape == (nbones,),
          f"record_stream.py --id: the skeleton of the character's database ({d['parents'].shape[0]} bones "
          f"for poses of {nbones})")


def main():
    os.makedirs(os.path.join(BUILD, "tests"), exist_ok=True)
    work = os.path.abspath(tempfile.mkdtemp(prefix="examples-", dir=os.path.join(BUILD, "tests")))
    with Server() as server:
        log = os.path.join(work, "contacts.csv")
        agent = subprocess.run([sys.executable, os.path.join(EXAMPLES, "crowd_agent.py"), "--port", str(server.port),
                                "--seconds", "8", "--area", "8", "--log", log], capture_output=True, text=True,
                               timeout=120)
        check(agent.returncode == 0, "crowd_agent.py runs" + (f": {agent.stderr[-800:]}" if agent.returncode else ""))
        print("    " + agent.stdout.strip())
        with open(log) as f:
            rows = list(csv.DictReader(f))
        feet = {r["foot"] for r in rows}
        cadence = len(rows) / 100 / 8.0
        check(len(feet) == 2 and CADENCE[0] < cadence < CADENCE[1],
              f"its log: touchdowns of {sorted(feet)}, {cadence:.2f} steps/s per character")
        reached = int(re.search(r"(\d+) goals reached", agent.stdout).group(1))
        check(reached > 0, f"{reached} goals reached")
        out = os.path.join(work, "walk.npz")
        rec = subprocess.run([sys.executable, os.path.join(EXAMPLES, "record_stream.py"), "--port", str(server.port),
                              "--create", "3", "--input", "stick:0,0.8", "--seconds", "2", "-o", out],
                             capture_output=True, text=True, timeout=60)
        check(rec.returncode == 0, "record_stream.py runs" + (f": {rec.stderr[-800:]}" if rec.returncode else ""))
    d = np.load(out)
    frames = d["tick"].shape[0]
    check(frames >= 100 and d["positions"].shape == (frames, 3, 22, 3) and d["rotations"].shape == (frames, 3, 22, 4)
          and d["parents"].shape == (22,), f"the .npz: {frames} frames of 3 characters, 22 bones")
    walked = d["positions"][-1, :, 0, 2] - d["positions"][0, :, 0, 2]
    check(np.all(walked > 1.0), f"its roots walked forward (+z): {', '.join(f'{w:.2f}' for w in walked)} m")
    watch_another_database(work)
    shutil.rmtree(work)
    print("python examples: passed")


if __name__ == "__main__":
    main()

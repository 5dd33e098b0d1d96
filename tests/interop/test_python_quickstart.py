#!/usr/bin/env python3
"""python/examples/quickstart.py (the README's Python example) run as it is
written but for the port (a real server started here on an ephemeral one),
with the package from the tree. Checks what its comments say: 120 frames
whose row names the created character, the root walking forward (+z), and
the NotFoundError caught with the server's message. Run by tests/run.sh."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import ROOT, Server, check  # noqa: E402

EXAMPLE = os.path.join(ROOT, "python", "examples", "quickstart.py")
WALKED_M = 1.0  # along +z in two seconds at the stick's 0.8 (about 2 m)
SIDEWAYS_M = 0.3


def main():
    text = open(EXAMPLE).read()
    check(len(text.strip().splitlines()) <= 12, f"the quickstart is short ({len(text.strip().splitlines())} lines)")
    check('"127.0.0.1", 7878' in text, "it connects to make run's server (127.0.0.1:7878)")
    with Server() as server:
        script = text.replace('"127.0.0.1", 7878', f'"127.0.0.1", {server.port}')
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    check(run.returncode == 0, "the quickstart runs" + (f": {run.stderr[-800:]}" if run.returncode else ""))
    lines = run.stdout.strip().splitlines()
    rows = [re.match(r"(\d+) (\d+) \[\s*(\S+)\s+(\S+)\s+(\S+)\s*\]$", line) for line in lines[:-1]]
    check(len(rows) == 120 and all(rows), f"120 frame lines (tick, character, root): {len(rows)}")
    ticks = [int(r.group(1)) for r in rows]
    characters = {int(r.group(2)) for r in rows}
    check(ticks == sorted(ticks) and len(characters) == 1 and characters.pop() > 0,
          "ticks in order, every row naming the one character created")
    first, last = rows[0], rows[-1]
    dz = float(last.group(5)) - float(first.group(5))
    dx = float(last.group(3)) - float(first.group(3))
    check(dz > WALKED_M and abs(dx) < SIDEWAYS_M, f"its root walked forward: {dz:.2f} m along +z, {dx:.2f} m sideways")
    check(lines[-1].startswith("no such database: ") and "nope" in lines[-1],
          f"the NotFoundError caught with the server's message: {lines[-1]!r}")
    print("python quickstart: passed")


if __name__ == "__main__":
    main()

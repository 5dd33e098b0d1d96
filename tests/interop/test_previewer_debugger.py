#!/usr/bin/env python3
"""The previewer's debugger views in a real browser (issue 36): Debian's
headless Chromium driven by puppeteer-core (web/test/debugger_test.mjs)
loads the page through Debian's websockify from a real server started here
with an auth token. Before the page opens, `animctl record` records three
seconds of a character walking `script:tour` to glTF, BVH and the pose
stream's JSON lines (the reference the replay is held to). The page checks
(from its own state and from what it drew, read back from the three.js
objects): the Server panel's chart against a server_stats call; a paused
history's ghosts (the chosen and a selected candidate) against the pose
request of their database frames, the candidates' feature arrows ending on
the ghosts' joints, the query's arrows giving the recorded query back; the
recording opened in the page (as a user picks it) and played on the
timeline, its bones where the stream put them. Screenshots:
BUILD/tests/previewer-debugger/*.png.

Needs chromium, websockify, node (tools/debian-packages.txt, group test) and
the npm packages (web/npm-ci.sh; run here when missing). Without a browser
that can be installed it prints "skipped:" with the reason, except under
CI=true, where it fails. Run by tests/run.sh (every tests/interop/*.py)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import BUILD, ROOT, Server, check  # noqa: E402
from previewer import Bridge, build_page, tools  # noqa: E402

TOKEN = "previewer-debugger-token"
RECORD_SECONDS = 3


def main():
    chromium, websockify, node = tools("previewer debugger test")
    out = os.path.join(BUILD, "tests", "previewer-debugger")
    web, modules = build_page(out)
    server = Server("--auth-token", TOKEN, log=os.path.join(out, "server.log"))
    bridge = None
    try:
        recording = os.path.join(out, "recording")
        os.makedirs(recording, exist_ok=True)
        base = os.path.join(recording, "tour")
        subprocess.run([os.path.join(BUILD, "animctl"), "--port", str(server.port), "--auth-token", TOKEN, "record",
                        "--create", "1", "--input", "script:tour", "--seconds", str(RECORD_SECONDS),
                        "--gltf", base + ".glb", "--bvh", base + ".bvh", "-o", base + ".jsonl"],
                       check=True, stdout=subprocess.DEVNULL)
        # The same recording as a .gltf with its .bin beside it (the page is given both files).
        subprocess.run([os.path.join(BUILD, "animctl"), "record", "--from", base + ".jsonl", "--gltf", base + ".gltf"],
                       check=True, stdout=subprocess.DEVNULL)
        check(all(os.path.getsize(base + ext) > 0 for ext in (".glb", ".bvh", ".jsonl", ".gltf", ".bin")),
              f"animctl record wrote {RECORD_SECONDS} s of script:tour as glTF (.glb; .gltf and .bin from the "
              "recording file), BVH and JSON lines")
        bridge = Bridge(websockify, web, server.port, os.path.join(out, "websockify.log"), f"?token={TOKEN}")
        env = dict(os.environ, NPM_MODULES=modules, CHROMIUM=chromium)
        test = subprocess.run([node, os.path.join(ROOT, "web", "test", "debugger_test.mjs"), bridge.url, out, base],
                              env=env, timeout=300)
        check(test.returncode == 0, f"the previewer's debugger views in headless Chromium (screenshots in {out})")
    finally:
        if bridge is not None:
            bridge.stop()
        server.stop()
    print("previewer debugger: passed")


if __name__ == "__main__":
    main()

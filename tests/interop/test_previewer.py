#!/usr/bin/env python3
"""The browser previewer (web/) in a real browser: Debian's headless Chromium
driven by puppeteer-core (web/test/browser_test.mjs) loads the page served by
Debian's websockify, which also bridges it to a real server started here with
an auth token (the page says hello with it, as any client). A crowd of six
characters walking to goals, owned by another connection (the Python
package), is there for the page to subscribe to. The server's data directory
holds "reordered": the default database's motion written as BVH with the
skeleton's bones in another order (as many bones, other parents), built by
animdb. The page lists and describes the default database, sees "reordered"
appear in its table when animctl loads it (and three more characters walk on
it), plays a range, drives a character with two seconds of
simulated key presses and a simulated gamepad and checks from its own state
that the skeleton moved where the input asked, checks the matching view (the
character's query and its match, the cost split agreeing with the two
vectors) and the foot locks, the debugger (the character's history paused
and scrubbed two seconds back: the frame the stream showed then, the
then-chosen frame as character_history returns it, the candidates table
equal to a search of the recorded query and sorting by a column, a
half-life set from the panel reported by character_state), a physical
character pushed by a click on its chest (out of kinematic and back),
subscribes to the crowd on both databases (and
an id naming no character), each character drawn with its own database's
skeleton, and switches encodings; sees "reordered" leave its table when
animctl unloads it; then the server is killed and started
again on its port (asked by the page's test on its stdout) and the page must
drop what went with the connection and connect again by itself.
Screenshots: BUILD/tests/previewer/*.png (make previewer-screenshots copies
four into docs/).

Needs chromium, websockify, node (tools/debian-packages.txt, group test) and
the npm packages (web/npm-ci.sh, run by `make test`; run here when missing).
Without a browser that can be installed it prints "skipped:" with the reason,
except under CI=true, where it fails. Run by tests/run.sh."""
import math
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import BUILD, ROOT, Server, animserver, check  # noqa: E402

TOKEN = "previewer-test-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing(what):
    if os.environ.get("CI") == "true":
        raise SystemExit(f"previewer test: {what}, and CI=true (make test installs it: tools/install-deps.sh test)")
    print(f"skipped: {what}")
    sys.exit(0)


def euler_zxy(q):
    """Degrees (z, x, y) whose Rz Rx Ry (BVH channels "Zrotation Xrotation Yrotation", core/offline/bvh.c) is the
    rotation of the unit quaternion q = (w, x, y, z)."""
    w, x, y, z = (float(v) for v in q)
    ex = math.asin(max(-1.0, min(1.0, 2 * (y * z + w * x))))
    ey = math.atan2(-2 * (x * z - w * y), 1 - 2 * (x * x + y * y))
    ez = math.atan2(-2 * (x * y - w * z), 1 - 2 * (x * x + z * z))
    return [math.degrees(ez), math.degrees(ex), math.degrees(ey)]


def write_reordered(client, directory):
    """The default database's ranges as BVH files in directory (metres), each joint's children listed last
    first: the same skeleton and motion (checked while writing this: every joint within 5 um of the
    default's), its bones in another order."""
    d = client.describe_database("default")
    names = [b.name for b in d.bones]
    parents = [b.parent for b in d.bones]
    limit = client.server.limits.max_pose_frames or 1000
    os.makedirs(directory, exist_ok=True)
    for r in d.ranges:
        parts = [client.pose("default", f, min(limit, r.stop - f), local=True, global_=True)
                 for f in range(r.start, r.stop, limit)]
        offsets = parts[0].local_positions[0]
        lines, order = ["HIERARCHY"], []

        def joint(b, depth):  # bone 1 (Hips) is the file's root; bone 0, the simulation bone, is animdb's
            pad, root = "  " * depth, depth == 0
            o = (0.0, 0.0, 0.0) if root else offsets[b]
            lines.extend([f"{pad}{'ROOT' if root else 'JOINT'} {names[b]}", pad + "{",
                          f"{pad}  OFFSET {o[0]:.6f} {o[1]:.6f} {o[2]:.6f}",
                          f"{pad}  CHANNELS {'6 Xposition Yposition Zposition' if root else '3'} "
                          "Zrotation Xrotation Yrotation"])
            order.append(b)
            children = [c for c in range(len(names)) if parents[c] == b][::-1]
            for c in children:
                joint(c, depth + 1)
            if not children:
                lines.extend([f"{pad}  End Site", pad + "  {", f"{pad}    OFFSET 0 0 0", pad + "  }"])
            lines.append(pad + "}")

        joint(1, 0)
        lines.extend(["MOTION", f"Frames: {r.stop - r.start}", f"Frame Time: {1.0 / d.summary.frame_rate:.8f}"])
        for part in parts:
            for i in range(len(part)):
                values = list(part.global_positions[i][1]) + euler_zxy(part.global_rotations[i][1])
                for b in order[1:]:
                    values += euler_zxy(part.local_rotations[i][b])
                lines.append(" ".join(f"{v:.6f}" for v in values))
        with open(os.path.join(directory, f"{r.name}.bvh"), "w") as f:
            f.write("\n".join(lines) + "\n")


def main():
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(chromium, os.X_OK):
        missing("no Chromium (Debian package chromium) on this machine")
    websockify = shutil.which("websockify") or "/usr/bin/websockify"
    if not os.access(websockify, os.X_OK):
        missing("no websockify (Debian package websockify) on this machine")
    node = shutil.which("node")
    if node is None:
        missing("no Node.js (Debian package nodejs) on this machine")
    npm_dir = os.path.join(BUILD, "npm")
    modules = os.path.join(npm_dir, "node_modules")
    stamp = os.path.join(modules, ".installed")
    lock = os.path.join(ROOT, "web", "package-lock.json")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) <= os.path.getmtime(lock):
        subprocess.run([os.path.join(ROOT, "web", "npm-ci.sh"), npm_dir], check=True)
    out = os.path.join(BUILD, "tests", "previewer")
    os.makedirs(out, exist_ok=True)
    web = os.path.join(out, "web")
    subprocess.run([os.path.join(ROOT, "web", "build.sh"), web, modules], check=True)

    data = os.path.join(out, "data")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    server_args = ("--auth-token", TOKEN, "--data-dir", data)
    server = Server(*server_args, log=os.path.join(out, "server.log"))
    bridge = None
    try:
        with animserver.Client(server.host, server.port, auth_token=TOKEN) as writer:
            write_reordered(writer, os.path.join(out, "reordered-bvh"))
        subprocess.run([os.path.join(BUILD, "animdb"), "build", "-o", os.path.join(data, "reordered.animdb"),
                        "--name", "reordered", "--scale", "1", os.path.join(out, "reordered-bvh")],
                       check=True, stdout=subprocess.DEVNULL)
        animctl = [os.path.join(BUILD, "animctl"), "--port", str(server.port), "--auth-token", TOKEN, "db"]
        reordered, big = [], []
        port = free_port()
        bridge = subprocess.Popen([websockify, "--web", web, f"127.0.0.1:{port}", f"127.0.0.1:{server.port}"],
                                  stdout=open(os.path.join(out, "websockify.log"), "w"), stderr=subprocess.STDOUT)
        crowd = animserver.Client(server.host, server.port, auth_token=TOKEN, client_name="previewer-crowd")
        ids = crowd.create_characters("default", [{"x": 3.0 + 1.2 * i, "z": -3.0} for i in range(6)]).characters
        # Goals 2 km off in a narrow fan: still walking at the end of the test however slowly it runs (80 m,
        # 89 s at 0.9 m/s, were reached under load 9 before the walk check), spread slowly, in one view.
        crowd.set_inputs([animserver.goal(c, 3.0 + 1.2 * i + 2000.0 * math.cos(0.05 * i),
                                          -3.0 - 2000.0 * math.sin(0.05 * i), 0.9) for i, c in enumerate(ids)])
        check(True, f"crowd of {len(ids)} characters walking to goals (another connection's)")
        for _ in range(100):  # bound on waiting for websockify to listen
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            subprocess.run(["sleep", "0.1"])
        url = f"http://127.0.0.1:{port}/?token={TOKEN}"
        env = dict(os.environ, NPM_MODULES=modules, CHROMIUM=chromium)
        test = subprocess.Popen([node, os.path.join(ROOT, "web", "test", "browser_test.mjs"), url, out,
                                 ",".join(str(i) for i in ids)], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        try:
            for line in test.stdout:
                # "HARNESS load": animctl loads "reordered", three characters walk on it (their ids
                # answered); "HARNESS unload": they are destroyed, animctl unloads it; "HARNESS kill": the
                # server dies; "HARNESS start": it comes back on its port; "HARNESS crowd": 1,000 more
                # characters walk round (-300, 0) (their ids answered); "HARNESS crowd-end": they go.
                if line.startswith("HARNESS "):
                    what, answer = line.split()[1], "done"
                    if what == "load":
                        subprocess.run(animctl + ["load", "reordered"], check=True, stdout=subprocess.DEVNULL)
                        reordered = crowd.create_characters(
                            "reordered", [{"x": 3.0 + 1.2 * i, "z": -3.0} for i in range(6, 9)]).characters
                        crowd.set_inputs([animserver.goal(c, 3.0 + 1.2 * i + 2000.0 * math.cos(0.05 * i),
                                                          -3.0 - 2000.0 * math.sin(0.05 * i), 0.9)
                                          for i, c in zip(range(6, 9), reordered)])
                        answer += " " + ",".join(str(i) for i in reordered)
                    elif what == "unload":
                        crowd.destroy_characters(reordered)
                        subprocess.run(animctl + ["unload", "reordered"], check=True, stdout=subprocess.DEVNULL)
                    elif what == "crowd":
                        # A crowd of 1,000 on a 32 x 32 m square round (-300, 0), each walking across it to
                        # its mirror image through the centre (the region view, issue 36), so that none is
                        # ever more than 23 m from it: goals 2 km off took the corners out of the page's 40 m
                        # region in a slow run (991 of 1,000 watched). Behind the first crowd, whose goals are
                        # toward +x: in a slow run it walked 300 m and into a region round (300, 0).
                        placements = [{"x": -300.0 + (i % 32) - 15.5, "z": (i // 32) - 15.5} for i in range(1000)]
                        big = crowd.create_characters("default", placements).characters
                        crowd.set_inputs([animserver.goal(c, -600.0 - p["x"], -p["z"], 1.0)
                                          for c, p in zip(big, placements)])
                        answer += " " + ",".join(str(i) for i in big)
                    elif what == "crowd-end":
                        crowd.destroy_characters(big)
                    elif what == "kill":
                        server.kill()
                    else:
                        server = Server(*server_args, port=server.port, log=os.path.join(out, "server-restarted.log"))
                    test.stdin.write(answer + "\n")
                    test.stdin.flush()
                else:
                    print(line, end="", flush=True)
            code = test.wait(timeout=300)
        finally:
            if test.poll() is None:
                test.kill()
        crowd.close()
        check(code == 0, f"the previewer in headless Chromium (screenshots in {out})")
    finally:
        if bridge is not None:
            bridge.terminate()
            bridge.wait(timeout=10)
        server.stop()
    print("previewer: passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The browser previewer (web/) in a real browser: Debian's headless Chromium
driven by puppeteer-core (web/test/browser_test.mjs) loads the page served by
Debian's websockify, which also bridges it to a real server started here with
an auth token (the page says hello with it, as any client). A crowd of six
characters walking to goals, owned by another connection (the Python
package), is there for the page to subscribe to. The page lists and describes
the default database, plays a range, drives a character with two seconds of
simulated key presses and a simulated gamepad and checks from its own state
that the skeleton moved where the input asked, checks the matching view (the
character's query and its match, the cost split agreeing with the two
vectors) and the foot locks, subscribes to the crowd (and an id naming no
character) and switches encodings; then the server is killed and started
again on its port (asked by the page's test on its stdout) and the page must
drop what went with the connection and connect again by itself.
Screenshots: BUILD/tests/previewer/*.png (make previewer-screenshots copies
three into docs/).

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

    server = Server("--auth-token", TOKEN, log=os.path.join(out, "server.log"))
    bridge = None
    try:
        port = free_port()
        bridge = subprocess.Popen([websockify, "--web", web, f"127.0.0.1:{port}", f"127.0.0.1:{server.port}"],
                                  stdout=open(os.path.join(out, "websockify.log"), "w"), stderr=subprocess.STDOUT)
        crowd = animserver.Client(server.host, server.port, auth_token=TOKEN, client_name="previewer-crowd")
        ids = crowd.create_characters("default", [{"x": 3.0 + 1.2 * i, "z": -3.0} for i in range(6)]).characters
        # Goals 80 m off in a narrow fan: still walking at the end of the test, spread slowly, in one view.
        crowd.set_inputs([animserver.goal(c, 3.0 + 1.2 * i + 80.0 * math.cos(0.05 * i),
                                          -3.0 - 80.0 * math.sin(0.05 * i), 0.9) for i, c in enumerate(ids)])
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
                # "HARNESS kill": the server dies; "HARNESS start": it comes back on its port.
                if line.startswith("HARNESS "):
                    what = line.split()[1]
                    if what == "kill":
                        server.kill()
                    else:
                        server = Server("--auth-token", TOKEN, port=server.port,
                                        log=os.path.join(out, "server-restarted.log"))
                    test.stdin.write("done\n")
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

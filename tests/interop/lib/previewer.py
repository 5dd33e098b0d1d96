"""What the previewer's browser tests share (tests/interop/test_previewer*.py):
the tools they need found (Debian's chromium, websockify, node; missing
ones skip the test, except under CI=true, where they fail it), the npm
packages installed when stale (web/npm-ci.sh), the page built
(web/build.sh), and websockify serving it and bridging to a server."""
import os
import shutil
import socket
import subprocess
import sys
import time

from animtest import BUILD, ROOT


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing(test, what):
    """Skips the test (exit 0, "skipped: ..."); under CI=true fails it."""
    if os.environ.get("CI") == "true":
        raise SystemExit(f"{test}: {what}, and CI=true (make test installs it: tools/install-deps.sh test)")
    print(f"skipped: {what}")
    sys.exit(0)


def tools(test):
    """(chromium, websockify, node) paths, or the test skipped (failed under CI=true)."""
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(chromium, os.X_OK):
        missing(test, "no Chromium (Debian package chromium) on this machine")
    websockify = shutil.which("websockify") or "/usr/bin/websockify"
    if not os.access(websockify, os.X_OK):
        missing(test, "no websockify (Debian package websockify) on this machine")
    node = shutil.which("node")
    if node is None:
        missing(test, "no Node.js (Debian package nodejs) on this machine")
    return chromium, websockify, node


def build_page(out):
    """The npm packages (installed again when web/package-lock.json is newer)
    and the page built into OUT/web. Returns (the page's folder, node_modules)."""
    npm_dir = os.path.join(BUILD, "npm")
    modules = os.path.join(npm_dir, "node_modules")
    stamp = os.path.join(modules, ".installed")
    lock = os.path.join(ROOT, "web", "package-lock.json")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) <= os.path.getmtime(lock):
        subprocess.run([os.path.join(ROOT, "web", "npm-ci.sh"), npm_dir], check=True)
    os.makedirs(out, exist_ok=True)
    web = os.path.join(out, "web")
    subprocess.run([os.path.join(ROOT, "web", "build.sh"), web, modules], check=True)
    return web, modules


class Bridge:
    """websockify serving the page (--web) and bridging each WebSocket to the
    server's port, on a free loopback port; `url` is the page's address."""

    def __init__(self, websockify, web, server_port, log, query=""):
        self.port = free_port()
        self.proc = subprocess.Popen([websockify, "--web", web, f"127.0.0.1:{self.port}", f"127.0.0.1:{server_port}"],
                                     stdout=open(log, "w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10  # a bound on waiting for it to listen
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{self.port}/{query}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)

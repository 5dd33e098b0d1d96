"""What the Python interop tests share (a folder tests/run.sh does not run):
the package on sys.path, a real server on an ephemeral port, checks that
print what they verified."""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
sys.path.insert(0, os.path.join(ROOT, "python"))

import animserver  # noqa: E402 (the package from the tree, generated from proto/ on import)


def check(condition, what):
    """Fails with ``what`` or prints it as verified."""
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def install_package(prefix):
    """``pip install ./python`` into a fresh virtual environment, as a user
    does (Debian's numpy and protobuf seen through --system-site-packages;
    offline: the build backend is the standard library), in a new folder
    under BUILD/tests named from prefix. Returns (that folder, the
    environment's folder, its interpreter)."""
    os.makedirs(os.path.join(BUILD, "tests"), exist_ok=True)
    work = os.path.abspath(tempfile.mkdtemp(prefix=prefix, dir=os.path.join(BUILD, "tests")))
    venv = os.path.join(work, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    pip = subprocess.run([python, "-m", "pip", "install", "--no-index", "--quiet", os.path.join(ROOT, "python")],
                         capture_output=True, text=True)
    check(pip.returncode == 0, "pip install ./python into a fresh virtual environment"
          + (f": {pip.stderr[-400:]}" if pip.returncode else ""))
    return work, venv, python


class Server:
    """The real animserver on 127.0.0.1 (an ephemeral port unless given)."""

    def __init__(self, *args, port=0, log=None):
        self.args = list(args)
        self.log = open(log, "w") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen([os.path.join(BUILD, "animserver"), "--port", str(port)] + self.args,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline().strip()
        assert line.startswith("listening on "), f"server did not start: {line!r}"
        self.host, port_text = line[len("listening on "):].rsplit(":", 1)
        self.port = int(port_text)

    def stop(self, timeout=10.0):
        """SIGTERM; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wait_until(predicate, seconds, step=0.01):
    """Polls ``predicate`` up to ``seconds`` (a bound on waiting, not a measurement)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()

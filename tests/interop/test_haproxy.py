#!/usr/bin/env python3
"""Scale-out behind HAProxy: three animserver instances and Debian's haproxy
on loopback, with the health check of deploy/haproxy.cfg (a real protobuf Ping
frame sent, the echoed payload expected).

1. Every backend passes the check (haproxy's own status: UP, L7OK), the
   check's bytes are exactly the Ping frame the generated module encodes, and
   the same check fails at layer 7 on a server that accepts connections but
   refuses the ping (one with an auth token: a ping before hello is refused).
2. Clients through haproxy (hello, pings, a search, one character per
   connection) land on all three backends: each instance, asked directly,
   holds some of the characters, and they add up.
3. One instance is drained (SIGTERM: exits 0), another killed (SIGKILL).
   Once the checks mark them down (bounded wait, failure names the states),
   new connections through haproxy still succeed, all on the survivor, which
   answers directly as well.

Every process started here is stopped in a finally block. Without haproxy the
test prints "skipped: haproxy not installed" and exits 0, except under CI=true,
where it fails. Run by tests/run.sh with ANIM_BUILD_DIR set.
"""
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import animserver, check  # noqa: E402 (the Python package from python/)

pb = animserver.pb
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
LOGS = os.path.join(BUILD, "tests")
CHECK_WAIT_S = 20.0  # bound on waiting for haproxy's checks to change a server's state


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port, name="haproxy-test"):
    return animserver.Client("127.0.0.1", port, client_name=name, timeout=10)


def exercise(port, name):
    """One client session: hello, pings, a search, a character. Returns the
    open connection (its character lives as long as it does)."""
    conn = connect(port, name)
    assert conn.server.protocol_version == 1
    for i in range(3):
        payload = b"%s-%d" % (name.encode(), i)
        assert conn.ping(payload).payload == payload
    matches = conn.search("default", from_frame={"frame": 100}, k=3).matches
    assert len(matches) == 3 and matches[0].cost == 0.0
    assert len(conn.create_characters("default", [{"x": 0.0, "z": 0.0}]).characters) == 1
    return conn


def server_stats(port):
    with connect(port) as conn:
        return conn.server_stats()


def health_check_lines():
    """The tcp-check rules of deploy/haproxy.cfg's animserver backend."""
    lines = []
    with open(os.path.join(ROOT, "deploy", "haproxy.cfg")) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words[:1] == ["tcp-check"]:
                lines.append(" ".join(words))
    return lines


class Haproxy:
    def __init__(self, binary, config_path, socket_path, log_path):
        self.socket_path = socket_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([binary, "-db", "-f", config_path], stdout=self.log, stderr=self.log)

    def stat(self, backend="animservers"):
        """haproxy's 'show stat' for a backend: {server: (status, check_status)}."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.socket_path)
            s.sendall(b"show stat\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        rows = csv.DictReader(io.StringIO(data.decode().lstrip("# ")))
        return {r["svname"]: (r["status"], r["check_status"]) for r in rows
                if r["pxname"] == backend and r["svname"] not in ("FRONTEND", "BACKEND")}

    def wait_for(self, expected, what, backend="animservers"):
        """Polls the servers' states until they match expected (name -> status
        prefix), within CHECK_WAIT_S; fails naming the last states seen."""
        deadline = time.monotonic() + CHECK_WAIT_S
        states = {}
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "haproxy exited (see its log)"
            try:
                states = self.stat(backend)
            except OSError:
                states = {}
            if states and all(states.get(n, ("", ""))[0].startswith(s) for n, s in expected.items()):
                return states
            time.sleep(0.1)
        raise AssertionError(f"{what}: haproxy's checks did not reach {expected} within {CHECK_WAIT_S:.0f} s; "
                             f"last states {states}")


def main():
    # Debian installs haproxy in /usr/sbin, which a user's PATH may lack.
    binary = shutil.which("haproxy", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if binary is None:
        if os.environ.get("CI") == "true":
            raise SystemExit("haproxy not installed, and CI=true: install it (tools/install-deps.sh test)")
        print("skipped: haproxy not installed")
        return
    os.makedirs(LOGS, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="animserver-haproxy-")
    servers, haproxy, locked = {}, None, None
    try:
        # Three instances on ephemeral ports, and a fourth with an auth token
        # (it refuses a ping before hello) that the check must find bad.
        for name in ("a1", "a2", "a3", "locked"):
            log = open(os.path.join(LOGS, f"haproxy_{name}.server.log"), "w")
            extra = ["--auth-token", "not-sent-by-the-check"] if name == "locked" else []
            proc = subprocess.Popen([os.path.join(BUILD, "animserver"), "--host", "127.0.0.1", "--port", "0"] + extra,
                                    stdout=subprocess.PIPE, stderr=log, text=True)
            servers[name] = [proc, None]
            line = proc.stdout.readline().strip()
            assert line.startswith("listening on "), f"{name} did not start: {line!r}"
            servers[name][1] = int(line.rsplit(":", 1)[1])
        locked = servers.pop("locked")

        # The health check of deploy/haproxy.cfg, and its bytes.
        rules = health_check_lines()
        send = [r.split()[2] for r in rules if r.startswith("tcp-check send-binary ")]
        expect = [r.split()[-1] for r in rules if r.startswith("tcp-check expect binary ")]
        check(len(send) == 1 and len(expect) == 1, "deploy/haproxy.cfg has one send-binary and one expect binary")
        frame = animserver.codec.encode_request(1, "ping", {"payload": b"hchk"})
        check(bytes.fromhex(send[0]) == frame, f"the check sends the Ping frame {frame.hex()}")
        answer = pb.Response(id=1, ping=pb.PingResponse(payload=b"hchk")).SerializeToString()
        check(bytes.fromhex(expect[0]) in answer, f"the check expects {expect[0]}, part of the Ping answer")

        port = free_port()
        config = os.path.join(scratch, "haproxy.cfg")
        stat_socket = os.path.join(scratch, "haproxy.sock")
        with open(config, "w") as f:
            f.write(f"""global
    maxconn 512
    stats socket {stat_socket} mode 600 level admin

defaults
    mode tcp
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    retries 2
    option redispatch

frontend animserver
    bind 127.0.0.1:{port}
    default_backend animservers

backend animservers
    balance roundrobin
    option tcp-check
""")
            for rule in rules:
                f.write(f"    {rule}\n")
            f.write("    default-server inter 200ms fastinter 100ms downinter 200ms fall 2 rise 1\n")
            for name, (_, server_port) in servers.items():
                f.write(f"    server {name} 127.0.0.1:{server_port} check\n")
            # The same rules against a server that answers the ping with an error.
            f.write("\nbackend decoy\n    option tcp-check\n    timeout check 1s\n")
            for rule in rules:
                f.write(f"    {rule}\n")
            f.write(f"    server locked 127.0.0.1:{locked[1]} check inter 200ms fall 1 rise 1\n")
        haproxy = Haproxy(binary, config, stat_socket, os.path.join(LOGS, "haproxy.log"))

        states = haproxy.wait_for({n: "UP" for n in servers}, "startup")
        deadline = time.monotonic() + CHECK_WAIT_S
        while not all(s[1] == "L7OK" for s in states.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
            states = haproxy.stat()
        check(all(s == ("UP", "L7OK") for s in states.values()),
              f"haproxy's Ping check passes on all three backends (layer 7): {states}")
        decoy = haproxy.wait_for({"locked": "DOWN"}, "a server refusing the ping", backend="decoy")
        check(decoy["locked"][1].startswith("L7"),
              f"the check fails at layer 7 on a server that accepts but refuses the ping: {decoy}")

        # Clients through haproxy: spread over every backend.
        clients = [exercise(port, f"lb-{i}") for i in range(9)]
        print("  ok: 9 connections through haproxy: hello, 3 pings, a search, a character each")
        shares = {n: server_stats(p).characters for n, (_, p) in servers.items()}
        check(all(v >= 1 for v in shares.values()) and sum(shares.values()) == 9,
              f"the 9 connections' characters live on all three backends: {shares}")
        for c in clients:
            c.close()

        # Drain a1 (graceful), kill a2.
        servers["a1"][0].send_signal(signal.SIGTERM)
        code = servers["a1"][0].wait(timeout=10)
        check(code == 0, "a1 drained on SIGTERM and exited 0")
        servers["a2"][0].kill()
        servers["a2"][0].wait(timeout=10)
        states = haproxy.wait_for({"a1": "DOWN", "a2": "DOWN", "a3": "UP"}, "after drain and kill")
        check(True, f"haproxy's checks marked the drained and the killed backend down: {states}")

        survivor = servers["a3"][1]
        before = server_stats(survivor).characters
        clients = [exercise(port, f"after-{i}") for i in range(6)]
        print("  ok: 6 new connections through haproxy succeed with a1 and a2 gone")
        after = server_stats(survivor).characters
        check(after - before == 6, f"all 6 landed on the survivor a3 ({before} -> {after} characters)")
        for c in clients:
            c.close()
        direct = connect(survivor)
        check(direct.ping(b"direct").payload == b"direct",
              "the survivor answers directly")
        direct.close()
    finally:
        if haproxy is not None:
            haproxy.proc.kill()
            haproxy.proc.wait(timeout=10)
            haproxy.log.close()
        for proc, _ in list(servers.values()) + ([locked] if locked else []):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    code = servers["a3"][0].returncode
    check(code == 0, "the survivor exits 0 on SIGTERM")
    print("haproxy scale-out: passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What an inverse_dynamics request costs the server, in CPU time, for one
or more server binaries in alternated rounds (a build before a change and
one after: each server started afresh on DATA, every request timed from
the server's own utime + stime in /proc).

    build/animdb build -o DIR/bandai.animdb --name bandai --scale 0.01 --mirror ../shared/data/mocap/bandai-namco
    /usr/bin/python3 bench/dynamics_request.py DIR SERVER [SERVER...] [--requests 30] [--rounds 3]

Per server: one request first (a server that keeps the database's body
model builds it there), then --requests requests of 30 frames and of the
whole of Bandai's dataset-1 walk (389 frames); the median and lowest CPU
milliseconds per request over --rounds rounds. Python 3 with Debian's
python3-protobuf; the Python client of the tree.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import animserver  # noqa: E402

RANGE = "dataset-1_walk_normal_001"


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_server(binary, data, requests):
    p = subprocess.Popen([binary, "--port", "0", "--data-dir", data], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        port = None
        for _ in range(50):
            m = re.search(r":(\d+)\s*$", p.stdout.readline())
            if m:
                port = int(m.group(1))
                break
        if port is None:
            raise RuntimeError(f"{binary}: no port")
        out = {}
        with animserver.Client("127.0.0.1", port) as c:
            c.load_database("bandai")
            walk = next(r for r in c.describe_database("bandai").ranges if r.name == RANGE)
            t0 = cpu_seconds(p.pid)
            c.inverse_dynamics("bandai", walk.start, walk.start + 30)
            out["first, 30 frames"] = cpu_seconds(p.pid) - t0
            for label, stop in (("30 frames", walk.start + 30), ("389 frames", walk.stop)):
                t0 = cpu_seconds(p.pid)
                for _ in range(requests):
                    c.inverse_dynamics("bandai", walk.start, stop)
                out[label] = (cpu_seconds(p.pid) - t0) / requests
        return out
    finally:
        p.terminate()
        p.wait()


def main():
    args, requests, rounds = [], 30, 3
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--requests":
            requests = int(argv.pop(0))
        elif a == "--rounds":
            rounds = int(argv.pop(0))
        else:
            args.append(a)
    if len(args) < 2:
        sys.exit(__doc__)
    data, servers = args[0], args[1:]
    results = {s: [] for s in servers}
    for r in range(rounds):
        for s in servers:
            results[s].append(one_server(s, data, requests))
            print(f"round {r + 1} {s}: " + ", ".join(f"{k} {1e3 * v:.1f} ms" for k, v in results[s][-1].items()),
                  flush=True)
    for label in ("first, 30 frames", "30 frames", "389 frames"):
        for s in servers:
            v = sorted(x[label] for x in results[s])
            print(f"{label:17s} {s}: median {1e3 * v[len(v) // 2]:.1f} ms, lowest {1e3 * v[0]:.1f} ms CPU a request")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Graph characters over the wire: the server's CPU and tick rate, wandering against following paths.

Starts build/animserver (or --build's) on an ephemeral loopback port, builds
the default database's graph, creates N MODE_GRAPH characters (one
connection, no subscription: the tick alone), gives each a path from
where it stands (as ``animbench graph --crowd``: a third closed circles of
radius 2 to 5 m, a third open zigzags of 10 m legs, a third L's of 3 + 3
m) and measures S seconds from 3 s on, then sets them wandering and
measures S seconds more. For each phase, from server_stats: the
ticks done a second, deadlines skipped, the server's CPU (user + system)
as a share of one core and per character and 60 Hz period of wall time (a
tick that falls behind folds the periods it skipped into its dt). On a
machine shared with other work the server gets what the others leave: a
crowd that needs more than that falls behind, and its CPU figures are
bounded by its share, not its need; `animbench graph --crowd` measures
the need (CPU time in process, one thread). Issue 30 measured 25.8 Hz and 119% CPU with
1,000 path followers, 15% wandering.

    /usr/bin/python3 bench/graph_crowd_wire.py [--build DIR] [--characters 1000] [--seconds 15]

Run it on two builds one after the other (--build) for a before/after.
"""
import argparse
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import animserver  # noqa: E402


def path_of(i, x0, z0):
    kind, turn = i % 3, (1.0 if (i // 3) % 2 else -1.0)
    if kind == 0:
        r = 2.0 + (i % 7) * 0.5
        pts = [(x0 + turn * r * math.sin(2 * math.pi * k / 64), z0 + r - r * math.cos(2 * math.pi * k / 64))
               for k in range(64)]
        return pts, True
    if kind == 1:
        return [(x0 + turn * (3.0 if k % 2 else 0.0), z0 + 10.0 * k) for k in range(8)], False
    return [(x0, z0), (x0, z0 + 3.0), (x0 + 3.0 * turn, z0 + 3.0)], False


def phase(client, seconds):
    a = client.server_stats()
    time.sleep(seconds)
    b = client.server_stats()
    wall = (b.uptime_us - a.uptime_us) * 1e-6
    ticks = b.ticks - a.ticks
    cpu = (b.cpu_user_s + b.cpu_system_s) - (a.cpu_user_s + a.cpu_system_s)
    # Per character and 60 Hz period of wall time: a tick that falls behind
    # folds the skipped periods' time into the next (its dt grows), so the
    # characters still move 60 periods a second whatever the ticks done.
    return ticks / wall, b.ticks_skipped - a.ticks_skipped, cpu / wall, cpu / (wall * b.tick_rate * b.characters)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--characters", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    server = subprocess.Popen([os.path.join(args.build, "animserver"), "--port", "0"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    try:
        with animserver.Client("127.0.0.1", port, client_name="graph-crowd") as client:
            client.build_graph("default", timeout=300)
            n = args.characters
            places = [(20.0 * (i % 40), 80.0 * (i // 40)) for i in range(n)]
            ids = []
            for start in range(0, n, 250):
                chunk = [{"x": x, "z": z} for x, z in places[start:start + 250]]
                ids += list(client.create_characters("default", chunk, mode=2).characters)
            paths = []
            for i, cid in enumerate(ids):
                pts, closed = path_of(i, *places[i])
                paths.append({"character": cid, "points": [{"x": x, "z": z} for x, z in pts], "closed": closed})
            client.set_paths(paths)
            time.sleep(3.0)  # the first plans (from where each was created) out of the way
            rows = [("path",) + phase(client, args.seconds)]
            client.set_paths([{"character": cid, "points": []} for cid in ids])  # back to wandering
            time.sleep(2.0)
            rows.insert(0, ("wander",) + phase(client, args.seconds))
            for name, hz, skipped, cores, per in rows:
                print(f"{args.build}: {n} graph characters, {name}: {hz:.1f} ticks/s, {skipped} deadlines skipped, "
                      f"server CPU {100 * cores:.0f}% of a core, {1e6 * per:.2f} us per character and period")
            print(f"  path / wander: {rows[1][4] / rows[0][4]:.2f}x")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()

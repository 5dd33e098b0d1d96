#!/usr/bin/env python3
"""Motion graphs measured over the wire: what a client of the real server sees.

    build/animbench graph --write DIR           # DIR/graph-6k.animdb, DIR/graph-30k.animdb
    /usr/bin/python3 bench/graph_wire.py DIR [BUILD]

For each database (Bandai Namco, ~6k frames; the same clips at five
playback speeds, ~30k frames): the build_graph answer's build time and the
server's peak resident memory during the build (VmHWM reset before it, less
the RSS before), with the progress describe_graph reported meanwhile. On
the 6k graph: query_graph along a straight line and a circle of radius 3 m
(error after the first 5 s; plan times on the server). Python 3 with
Debian's python3-protobuf; the Python client of tests/interop.
"""
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
from test_python_client import Connection, generate_module  # noqa: E402


def memory(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024
    return values["VmRSS"], values["VmHWM"]


class Client:
    def __init__(self, pb, conn):
        self.pb, self.conn, self.next_id = pb, conn, 1

    def send(self, **body):
        request = self.pb.Request(id=self.next_id, **body)
        self.next_id += 1
        self.conn.send(request)
        return request.id

    def answer(self, rid):
        while True:
            m = self.conn.receive()
            if m.HasField("response") and m.response.id == rid:
                if m.response.HasField("error"):
                    raise RuntimeError(m.response.error.message)
                return m.response

    def call(self, **body):
        return self.answer(self.send(**body))


def main():
    data = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build")
    pb = generate_module()
    proc = subprocess.Popen([os.path.join(build, "animserver"), "--port", "0", "--data-dir", data, "--no-default-db",
                             "--db", "graph-6k", "--db", "graph-30k"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline().strip()
        host, port = line[len("listening on "):].rsplit(":", 1)
        c = Client(pb, Connection(pb, host, int(port)))
        c.conn.sock.settimeout(600)
        for name in ("graph-6k", "graph-30k"):
            summary = c.call(describe_database=pb.DescribeDatabaseRequest(name=name)).describe_database.summary
            with open(f"/proc/{proc.pid}/clear_refs", "w") as f:
                f.write("5")  # VmHWM := VmRSS
            rss0, _ = memory(proc.pid)
            start = time.monotonic()
            rid = c.send(build_graph=pb.BuildGraphRequest(database=name))
            reports = []
            while True:
                time.sleep(0.05)
                did = c.send(describe_graph=pb.DescribeGraphRequest(database=name))
                m = c.conn.receive()
                while not (m.HasField("response") and m.response.id in (rid, did)):
                    m = c.conn.receive()
                if m.response.id == rid:
                    built = m.response
                    break
                reports.append(m.response.describe_graph.graph.progress)
            wall = time.monotonic() - start
            _, hwm = memory(proc.pid)
            if built.HasField("error"):
                raise RuntimeError(built.error.message)
            g = built.build_graph.graph
            mib = 2**20
            print(f"{name}: {summary.frames} frames; build {g.build_seconds:.2f} s on the server ({wall:.2f} s to the "
                  f"answer), peak memory +{(hwm - rss0) / mib:.1f} MiB (strip scratch "
                  f"{g.strip_memory_bytes / mib:.1f} MiB, graph {g.memory_bytes / mib:.2f} MiB); {g.nodes} nodes, "
                  f"{g.edges} edges, {g.transitions} "
                  f"transitions of {g.candidates} candidates, {g.components} components; {len(reports)} progress "
                  f"reports: {', '.join(f'{p:.2f}' for p in reports[:: max(1, len(reports) // 8)])}")
        ranges = c.call(describe_database=pb.DescribeDatabaseRequest(name="graph-6k")).describe_database.ranges
        walk = next(r for r in ranges if r.name.startswith("dataset-2_walk_normal_001"))
        start = pb.Placement(start_frame=pb.FrameIndex(frame=walk.start + 121))
        line_points = [pb.Vec2(x=0, z=0), pb.Vec2(x=0, z=40)]
        circle = [pb.Vec2(x=3 * math.sin(2 * math.pi * i / 64), z=3 - 3 * math.cos(2 * math.pi * i / 64))
                  for i in range(64)]
        cases = (("line 40 m", line_points, False, 0.0), ("circle r=3 m", circle, True, math.pi / 2))
        for what, points, closed, facing in cases:
            start.facing = facing
            q = c.call(query_graph=pb.QueryGraphRequest(database="graph-6k", points=points, closed=closed, start=start,
                                                        settle=5)).query_graph
            print(f"query {what}: {q.seconds:.1f} s, {q.arc:.1f} m of path, error mean {q.error_mean:.3f} m, worst "
                  f"{q.error_max:.3f} m; {q.plans} plans ({q.plans_exhausted} cut short), "
                  f"{q.expansions / max(q.plans, 1):.0f} edges tried a plan, {q.plan_ms_mean:.2f} ms mean, "
                  f"{q.plan_ms_max:.2f} ms worst")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Python and C clients on the same workloads, against one server started here.

1. Requests: one connection, P requests in flight (pipelined), half pings and
   half searches (a random frame's features, k = 1), for D seconds:
   ``animctl load --library`` (the C client library, every response decoded),
   ``animctl load`` raw (requests packed with protobuf-c, responses only
   framed: the load generator's own ceiling), and a Python loop on
   ``Client.send`` / ``Pending.result`` (every response decoded by protobuf).
2. Streams: N characters walking, one subscription, every tick for S seconds;
   the C library's ``anim_client_next_frame`` (python/bench/stream_reader.c)
   and the Python package's ``StreamFrame`` (numpy arrays), in each encoding.
   Reported: poses decoded per CPU second of the client, and the share of one
   core the client needs to keep up with the live stream.

    /usr/bin/python3 python/bench/throughput.py [--seconds 5] [--pipeline 32] [--characters 1000]

Prints a Markdown table (docs/benchmarks.md's). Timings, so a benchmark, not a test.
"""
import argparse
import collections
import json
import os
import random
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import animserver  # noqa: E402


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def c_load(build, port, seconds, pipeline, library):
    before = children_cpu()
    args = [os.path.join(build, "animctl"), "--port", str(port), "--json", "load", "--connections", "1",
            "--pipeline", str(pipeline), "--duration", str(seconds), "--mix", "ping=1,search=1", "--k", "1"]
    out = json.loads(subprocess.run(args + (["--library"] if library else []), capture_output=True, text=True,
                                    check=True).stdout)
    return out["requests"], out["duration_s"], children_cpu() - before


def python_load(port, seconds, pipeline):
    with animserver.Client("127.0.0.1", port, client_name="py-load") as client:
        nframes = next(d.frames for d in client.list_databases().databases if d.name == "default")
        rng = random.Random(1)
        inflight = collections.deque()
        done = 0
        cpu0, start = time.process_time(), time.monotonic()
        end = start + seconds
        while True:
            while len(inflight) < pipeline:
                if rng.random() < 0.5:
                    inflight.append(client.send("ping", {"payload": b"p"}))
                else:
                    inflight.append(client.send("search", {"database": "default", "query": {
                        "from_frame": {"frame": rng.randrange(nframes)}, "k": 1}}))
            inflight.popleft().result()
            done += 1
            if done % 256 == 0 and time.monotonic() >= end:
                break
        while inflight:
            inflight.popleft().result()
            done += 1
        return done, time.monotonic() - start, time.process_time() - cpu0


def c_stream(build, port, characters, seconds, encoding):
    out = json.loads(subprocess.run([os.path.join(build, "stream_reader"), "127.0.0.1", str(port), str(characters),
                                     str(seconds), encoding], capture_output=True, text=True, check=True).stdout)
    return out["poses"], out["wall_s"], out["cpu_s"], out["client_dropped"]


def python_stream(port, characters, seconds, encoding):
    with animserver.Client("127.0.0.1", port, client_name="py-stream", timeout=10) as client:
        ids = client.create_characters("default", [{"x": (i % 32) * 2.0, "z": (i // 32) * 2.0}
                                                   for i in range(characters)]).characters
        client.set_inputs([animserver.stick(c, 0.0, 0.8) for c in ids])
        stream = client.subscribe(owned=True, encoding=encoding)
        want = int(seconds * stream.tick_rate + 0.5)
        checksum, poses = 0.0, 0
        frames = stream.frames(want)
        first = next(frames)
        cpu0, wall0 = time.process_time(), time.monotonic()
        for frame in frames:
            checksum += float(frame.positions[:, 0, 0].sum())
            poses += len(frame.characters)
        return poses, time.monotonic() - wall0, time.process_time() - cpu0, stream.client_dropped


def build_reader(build):
    target = os.path.join(build, "stream_reader")
    source = os.path.join(HERE, "stream_reader.c")
    if not os.path.exists(target) or os.path.getmtime(target) < os.path.getmtime(source):
        subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-I" + os.path.join(ROOT, "include"), source,
                        os.path.join(build, "libanimclient.a"), "-lprotobuf-c", "-lm", "-o", target], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pipeline", type=int, default=32)
    parser.add_argument("--characters", type=int, default=1000)
    args = parser.parse_args()
    build_reader(args.build)
    server = subprocess.Popen([os.path.join(args.build, "animserver"), "--port", "0"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    try:
        rows = []
        for name, run in (("C, `animctl load --library`", lambda: c_load(args.build, port, args.seconds,
                                                                         args.pipeline, True)),
                          ("C, `animctl load` (raw frames)", lambda: c_load(args.build, port, args.seconds,
                                                                            args.pipeline, False)),
                          ("Python, `Client.send` loop", lambda: python_load(port, args.seconds, args.pipeline))):
            requests, wall, cpu = run()
            rows.append(f"| requests, pipeline {args.pipeline} | {name} | {requests / wall:,.0f} req/s | "
                        f"{1e6 * cpu / requests:.1f} us CPU per request |")
        for encoding in ("quantized", "float"):
            for name, run in (("C, `anim_client_next_frame`", lambda: c_stream(args.build, port, args.characters,
                                                                              args.seconds, encoding)),
                              ("Python, `StreamFrame` (numpy)", lambda: python_stream(port, args.characters,
                                                                                      args.seconds, encoding))):
                poses, wall, cpu, dropped = run()
                rows.append(f"| {args.characters} characters streamed, {encoding} | {name} | "
                            f"{poses / cpu:,.0f} poses per CPU s | {100 * cpu / wall:.0f}% of a core to keep up"
                            f"{f', {dropped} frames dropped' if dropped else ''} |")
        print("| workload | client | throughput | cost |")
        print("|---|---|---:|---|")
        print("\n".join(rows))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The command-line tools end to end: animctl against the real server (every
request type, --json parsed), animdb on real motion capture (build, info,
search) and the server loading what animdb built. Run by tests/run.sh."""
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import animserver  # noqa: E402  (this checkout's Python client)

BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
SHARED = os.environ.get("ANIM_SHARED_DIR", "../shared")


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def run_both(*args, expect=0):
    """(stdout, stderr) of a tool that exits with ``expect``."""
    result = subprocess.run([os.path.join(BUILD, args[0])] + list(args[1:]), capture_output=True, text=True,
                            timeout=120)
    if result.returncode != expect:
        raise AssertionError(f"{' '.join(args)}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout, result.stderr


COMMANDS = ["hello", "stats", "shutdown", "ping", "db", "search", "pose", "inertialize", "transition-cost", "spring",
            "render", "stream", "record", "machine", "graph", "align", "fit", "load", "push", "history", "set-params",
            "inverse-dynamics", "marker-fit"]


def json_errors_and_help(port, data):
    """What an agent driving animctl --json needs: each command's --help says what it does and what
    --json prints; every error is one JSON line on stderr (stdout empty) with the exit status."""
    for command in COMMANDS:
        text = run("animctl", "--port", port, command, "--help")
        check(text.startswith(f"usage: animctl [--host H] [--port P] [--timeout MS] [--json] {command} ") and
              "--json" in text.split("\n\n")[2] and text == run("animctl", "help", command),
              f"animctl {command} --help: its own synopsis, what it does and its --json output")
    run("animctl", "help", "nope", expect=2)

    def error(expect, *args):
        out, err = run_both("animctl", "--port", port, "--json", *args, expect=expect)
        lines = err.splitlines()
        check(out == "" and len(lines) == 1, f"animctl --json {' '.join(args)}: one line on stderr, nothing on stdout")
        return json.loads(lines[0])["error"]

    e = error(1, "db", "describe", "nope")
    check(e["kind"] == "request" and e["code"] == "ENOTFOUND" and e["code_value"] == -8 and
          e["request"] == "db describe" and "nope" in e["message"], "a failed request: its code and the server's message")
    e = error(2, "search", "default", "--k", "x")
    check(e["kind"] == "usage" and "--k x" in e["message"], "a usage error: exit 2, kind usage")
    e = error(2, "bogus")
    check(e["kind"] == "usage" and "bogus" in e["message"], "an unknown command: one JSON line, no usage text")
    e = error(1, "machine", "check", os.path.join(data, "no-such.machine"))
    check(e["kind"] == "usage" and "no-such.machine" in e["message"], "a file that cannot be opened")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = str(s.getsockname()[1])
    out, err = run_both("animctl", "--port", closed, "--json", "hello", expect=1)
    e = json.loads(err)["error"]
    check(out == "" and e["kind"] == "connect" and e["code"] == "ECONNECT" and closed in e["message"],
          "no server: kind connect, ECONNECT, where")
    svg = os.path.join(data, "json.svg")
    drawn = json.loads(run("animctl", "--port", port, "--json", "render", "default", "100", "--count", "20", "-o", svg))
    check(drawn == {"file": svg, "poses": 2}, "animctl --json render -o: what it wrote")


def usage_errors_without_server():
    """A usage error exits 2 whatever the server: animctl checks a command's arguments before it
    connects (it connected first, so with no server every mistake exited 1, "cannot reach")."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = str(s.getsockname()[1])
    mistakes = [["bogus"], ["hello", "x"], ["stats", "x"], ["shutdown", "now"], ["ping", "--count", "0"],
                ["ping", "x"], ["db"], ["db", "describe"], ["db", "list", "x"], ["search"],
                ["search", "default", "--k", "x"], ["search", "default", "--frame"], ["pose", "default"],
                ["pose", "default", "x"], ["inertialize", "default", "1"], ["transition-cost", "default"],
                ["spring"], ["spring", "halflife", "--alpha"], ["spring", "gains", "--bogus", "1"], ["render"],
                ["render", "default", "1", "--count", "0"], ["render", "--stream"], ["stream"],
                ["stream", "--bogus", "1"], ["stream", "--region", "ring:0,0,5"],
                ["stream", "--region", "circle:0,0,5:follow=@2", "--create", "1"],
                ["stream", "--band", "3:1", "--create", "1"], ["stream", "--region", "box:0,0,5,5", "--id", "1"],
                ["stream", "--region", "circle:0,0,5", "--band", "3"], ["record"], ["record", "--create", "1"], ["machine"], ["machine", "check"], ["machine", "attach"],
                ["machine", "unload"], ["machine", "list", "x"], ["graph"], ["graph", "build"],
                ["graph", "path", "default", "1,2"], ["align"], ["align", "--source", "1,2,3"], ["fit", "default"],
                ["load", "--connections", "0"], ["push"], ["push", "default", "1:bogus"],
                ["push", "default", "1:impulse:Chest:1,2"], ["push", "default", "--seconds", "0"],
                ["history"], ["history", "--create", "--id", "5"],
                ["history", "--id", "5", "--ticks", "9:2"], ["set-params"], ["set-params", "halflife=1"],
                ["set-params", "transition_cost=x"], ["set-params", "no_stride_warp=2"], ["inverse-dynamics"], ["inverse-dynamics", "default"],
                ["inverse-dynamics", "--character", "5"], ["marker-fit", "default"]]
    check(sorted({m[0] for m in mistakes} - {"bogus"}) == sorted(COMMANDS), "a usage error of every command")
    for mistake in mistakes:
        out, err = run_both("animctl", "--port", closed, "--json", *mistake, expect=2)
        check(out == "" and json.loads(err)["error"]["kind"] == "usage",
              f"no server: animctl {' '.join(mistake)} exits 2 (usage), never tries to connect")
    for command in COMMANDS:
        check(run("animctl", "--port", closed, command, "--help").startswith("usage: animctl"),
              f"no server: animctl {command} --help exits 0")
    for good in (["hello"], ["db", "list"], ["search", "default", "--frame", "1"], ["spring", "gains", "--erp", "0.2"],
                 ["stream", "--create", "1"]):
        out, err = run_both("animctl", "--port", closed, "--json", *good, expect=1)
        check(json.loads(err)["error"]["kind"] == "connect", f"no server: animctl {' '.join(good)} exits 1 (connect)")


def history_and_params(ctl, port):
    """animctl history (a character's ticks, their searches and candidates) and set-params (parameters
    changed live, refused whole when one is out of range)."""
    h = json.loads(ctl("history", "--create", "--seconds", "1.5", "--keep", "2", "--candidates", "4",
                       "--input", "stick:0.4,0.8", "--last", "1"))
    searched = [t for t in h["ticks"] if t["searched"]]
    check(h["capacity"] == 120 and 30 <= len(h["ticks"]) <= 60 and len(searched) >= 5 and
          all(1 <= len(t["candidates"]) <= 4 and t["chosen"] == t["candidates"][0]["frame"] and
              len(t["candidates"][0]["group_costs"]) == len(h["groups"]) and t["reasons"] for t in searched),
          f"animctl history: {len(h['ticks'])} ticks, {len(searched)} searched, each with its candidates")
    table = run("animctl", "--port", port, "history", "--create", "--seconds", "1", "--tick", "last")
    check(table.startswith("tick ") and "rank" in table.splitlines()[1] and "trajectory" in table.splitlines()[1],
          "animctl history --tick last: the candidates with their cost by feature group")
    e = json.loads(run_both("animctl", "--port", port, "--json", "history", "--id", "12345", expect=1)[1])
    check(e["error"]["code"] == "ENOTFOUND", "animctl history --id of no character: ENOTFOUND")
    tuned = json.loads(ctl("set-params", "--seconds", "1", "transition_cost=0.5", "inertialize_halflife=0.2"))
    check(abs(tuned["before"]["transition_cost"] - 0.01) < 1e-6 and tuned["after"]["transition_cost"] == 0.5 and
          abs(tuned["after"]["inertialize_halflife"] - 0.2) < 1e-6 and tuned["after"]["forward_speed"] == 1.75,
          "animctl set-params: the parameters before and after in character_state")
    e = json.loads(run_both("animctl", "--port", port, "--json", "set-params", "--seconds", "0",
                            "back_speed=2", "velocity_halflife=-1", expect=1)[1])
    check(e["error"]["code"] == "EINVAL" and "velocity_halflife" in e["error"]["message"],
          "animctl set-params: a value out of range refused, naming it")
    warped = json.loads(ctl("set-params", "--seconds", "0.5", "no_root_steering=1", "root_steering_max=0.1",
                            "no_play_rate=1", "stride_scale_max=1.1", "no_orientation_warp=0"))
    b, a = warped["before"], warped["after"]
    check(b["no_root_steering"] == 0 and a["no_root_steering"] == 1 and abs(a["root_steering_max"] - 0.1) < 1e-6 and
          b["no_play_rate"] == 0 and a["no_play_rate"] == 1 and abs(a["stride_scale_max"] - 1.1) < 1e-6 and
          a["no_orientation_warp"] == 0 and a["no_stand_warp"] == 0 and abs(a["play_rate_max"] - 1.15) < 1e-6,
          "animctl set-params: the warps' switches and bounds, before and after")
    e = json.loads(run_both("animctl", "--port", port, "--json", "set-params", "--seconds", "0",
                            "no_root_steering=1", "play_rate_max=5", expect=1)[1])
    check(e["error"]["code"] == "EINVAL" and "play_rate_max" in e["error"]["message"],
          "animctl set-params: a warp's bound out of range refused, naming it")
    help_text = run("animctl", "--port", port, "set-params", "--help")
    check(all(n in help_text for n in ("no_root_steering", "root_steering_max", "no_play_rate", "stride_scale_min")),
          "animctl set-params --help names the warp fields")


def stream_regions(port):
    """`animctl stream --region`: a walker crossing a circle is announced entering and leaving once, with
    its database, version and bone count; --band gives the outer ring every 4th tick; --max-characters
    keeps the nearest; a bad region is refused by the server naming the field."""
    version = next(d["version"] for d in json.loads(run("animctl", "--port", port, "--json", "db", "list"))
                   if d["name"] == "default")
    # --create 2 places them 3 m apart on x at z = 0; both walk +z. The first crosses the circle of 2 m at
    # (0, 5); the second, 3 m from its centre line, never enters. The inner band (1 m) every tick, the
    # outer every 4th.
    lines = run("animctl", "--port", port, "--timeout", "20000", "stream", "--create", "2", "--input", "velocity:0,1.5",
                "--region", "circle:0,5,2", "--band", "1:1", "--band", "2:4", "--seconds", "8").splitlines()
    header, frames = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    entered = [e for f in frames for e in f.get("entered", [])]
    left = [c for f in frames for c in f.get("left", [])]
    check(len(entered) == 1 and left == [entered[0]["id"]] and entered[0]["database"] == "default" and
          entered[0]["database_version"] == version and entered[0]["bones"] == len(header["bones"]),
          f"animctl stream --region: one walker entered and left once ({len(frames)} frames; "
          f"entered {entered}, left {left})")
    walker = entered[0]["id"] if entered else None
    posed = [(f["tick"], math.hypot(p["positions"][0], p["positions"][2] - 5.0))
             for f in frames for p in f["poses"] if p["id"] == walker]
    check(posed and all(d <= 2.1 for _, d in posed) and all(p["id"] == walker for f in frames for p in f["poses"]),
          "animctl stream --region: only the walker, only while inside")
    gaps = lambda near: sorted(b[0] - a[0] for a, b in zip(posed, posed[1:]) if near(a[1]) and near(b[1]))
    inner, outer = gaps(lambda d: d < 0.9), gaps(lambda d: d > 1.1)
    check(inner and outer and inner[len(inner) // 2] == 1 and outer[len(outer) // 2] == 4,
          f"animctl stream --band 1:1 --band 2:4: tick gaps inside 1 m {inner[:3]}..., "
          f"between 1 and 2 m {outer[:3]}... (median 1 and 4)")
    lines = run("animctl", "--port", port, "stream", "--create", "2", "--input", "stick:0,0",
                "--region", "box:0.5,0,4,4", "--max-characters", "1", "--frames", "5").splitlines()
    frames = [json.loads(line) for line in lines[1:]]
    check(len(frames) == 5 and len(frames[0].get("entered", [])) == 1 and
          all(len(f["poses"]) == 1 and abs(f["poses"][0]["positions"][0]) < 0.5 for f in frames),
          "animctl stream --max-characters 1: the nearest of two in a box")
    out, err = run_both("animctl", "--port", port, "--json", "stream", "--create", "1", "--region",
                        "circle:0,0,-1", expect=1)
    check(out == "" and "subscribe.region.radius" in json.loads(err)["error"]["message"],
          "animctl stream --region circle:0,0,-1: the server's refusal names the field (exit 1)")


def leak_checker():
    """What runs animctl so that a leak fails it, and its name: nothing for an AddressSanitizer build (its
    leak checker runs at exit and fails the process), valgrind where it is installed, else None."""
    with open(os.path.join(BUILD, "animctl"), "rb") as f:
        if b"__asan_init" in f.read():
            return [], "AddressSanitizer's leak checker"
    valgrind = shutil.which("valgrind")
    if valgrind:
        return [valgrind, "-q", "--leak-check=full", "--error-exitcode=99"], "valgrind"
    return None, None


def search_by_bone_terms(port):
    """animctl search by bone terms (NAME=x,y,z: the names copied out of the arguments) answered, refused
    by the server, refused as a usage error after the names, each leak-free (it never freed the names)."""
    terms = ["--bone-position", "LeftFoot=0.1,0.05,0.2", "--bone-position", "RightFoot=-0.1,0.05,-0.1",
             "--bone-velocity", "LeftFoot=0,0,1", "--bone-velocity", "RightFoot=0,0,0.5",
             "--bone-velocity", "Hips=0,0,1.2"]
    trajectory = ["--trajectory-positions", "0,0.4,0,0.8,0,1.2", "--trajectory-directions", "0,1,0,1,0,1"]
    cases = [(terms + trajectory + ["--k", "2"], 0, "answered"),
             (terms + ["--k", "2"], 1, "refused by the server (no trajectory terms)"),
             (terms + trajectory + ["--k", "x"], 2, "a usage error after the names")]
    checker, name = leak_checker()
    if checker is None:
        print("skipped: animctl search's leak check (neither an AddressSanitizer build nor valgrind)")
        checker = []
    for args, expect, what in cases:
        command = checker + [os.path.join(BUILD, "animctl"), "--port", port, "--json", "search", "default"] + args
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != expect:
            raise AssertionError(f"animctl search by bone terms, {what}: exit {result.returncode}, want {expect} "
                                 f"(99: valgrind found a leak, 23: AddressSanitizer did)\n{result.stderr}")
        check(True, f"animctl search by bone terms, {what}: exit {expect}{f', leak-free ({name})' if name else ''}")
        if expect == 0:
            check(len(json.loads(result.stdout)["matches"]) == 2, "animctl search by bone terms: two matches")


def run(*args, expect=0):
    result = subprocess.run([os.path.join(BUILD, args[0])] + list(args[1:]), capture_output=True, text=True,
                            timeout=120)
    if result.returncode != expect:
        raise AssertionError(f"{' '.join(args)}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout


# A graph walk on the default database along a 12 m line from its idle node: the line's end within
# FOLLOW_START_S + 12 m / (FOLLOW_MIN_PACE * DEFAULT_DB_EXPECTED_SPEED) = 18 s (tests/support/follow_limits.h:
# the walk_start clip reaches walking speed 2 s in; at least half the expected speed, the walk's 1.5 m/s;
# measured 4.8 s). query_graph ends a walk within 0.05 m of an open path's end, or when the character
# arrived (within ANIM_PATH_ARRIVE_DISTANCE, core/graph/graph_path.h: it stops where its stopping clip ends).
FOLLOW_START_S = 2.0
FOLLOW_MIN_PACE = 0.5
DEFAULT_DB_EXPECTED_SPEED = 1.5
PATH_END_M = 0.3  # ANIM_PATH_ARRIVE_DISTANCE

NESTED = """idle { clip idle loop GO moving }
moving { machine loco STOP idle }
machine loco {
  walk { clip walk [0 1] loop FAST run }
  run { clip run [0 1] loop SLOW walk }
}
"""


def machines_and_graphs(ctl, data, port):
    """animctl machine, graph, align, fit and inverse-dynamics on the default database."""
    path = os.path.join(data, "nested.machine")
    with open(path, "w") as f:
        f.write(NESTED)
    broken = os.path.join(data, "broken.machine")
    with open(broken, "w") as f:
        f.write("stand { JUMP nowhere }\n")
    problems = [json.loads(line) for line in ctl("machine", "check", broken, expect=1).splitlines()]
    check(problems[0]["problem"] == "UNKNOWN_TARGET" and problems[0]["line"] == 1,
          "animctl machine check: the problem, where")
    summary = json.loads(ctl("machine", "load", path))
    check([s["name"] for s in summary["states"]] == ["idle", "moving", "walk", "run"], "animctl machine load")
    check(any(json.loads(line)["name"] == "nested" for line in ctl("machine", "list").splitlines()),
          "animctl machine list")
    states = [json.loads(line)["state_path"] for line in
              ctl("machine", "attach", "nested", "--seconds", "2", "--event", "0.3:GO",
                  "--event", "1.0:FAST").splitlines()]
    check(states == [["idle"], ["moving", "walk"], ["moving", "run"]],
          "animctl machine attach: the scripted states, in order")
    ctl("machine", "unload", "nested")
    ctl("machine", "unload", "nested", expect=1)
    # A build is long work (seconds under the sanitizers on a busy machine): a longer timeout than a request's 5 s.
    built = json.loads(ctl("--timeout", "60000", "graph", "build", "default", "--matrix", "64"))
    check(built["ready"] and built["nodes"] > 0 and built["transitions"] > 0, "animctl graph build")
    svg = os.path.join(data, "graph.svg")
    ctl("graph", "info", "default", "--svg", svg)
    check(open(svg).read().count("<rect") > 64, "animctl graph info --svg draws the distance matrix")
    walk = json.loads(ctl("graph", "path", "default", "0,0", "0,12", "--seconds", "20", "--settle", "2"))
    check(walk["steps"] > 0 and walk["plans"] > 0 and walk["error_mean"] < 0.25,
          "animctl graph path: a walk near the line")
    due = FOLLOW_START_S + 12.0 / (FOLLOW_MIN_PACE * DEFAULT_DB_EXPECTED_SPEED)
    check(walk["arc"] >= 12.0 - PATH_END_M - 1e-3 and walk["seconds"] <= due,
          f"animctl graph path: along the line to its end "
          f"({walk['arc']:.2f} m in {walk['seconds']:.2f} s, due {due:.0f} s)")
    aligned = json.loads(ctl("align", "--source", "0,0,0", "1,0,0", "0,1,0", "--target", "1,2,3", "2,2,3", "1,3,3"))
    check(abs(aligned["translation"][0] - 1) < 1e-4 and aligned["rms"] < 1e-4, "animctl align recovers a translation")
    ctl("align", "--source", "0,0,0", "--target", "1,1,1", expect=1)
    fit = json.loads(ctl("fit", "default", "Head=0,1.6,0", "LeftHand=-0.3,1.0,0.1", "RightHand=0.3,1.0,0.1",
                         "Hips=0,0.95,0"))
    check(len(fit["residuals"]) == 4 and max(fit["residuals"]) < 0.1, "animctl fit: a pose near the trackers")
    ctl("fit", "default", "Tail=0,1,0", expect=1)
    figure = os.path.join(data, "idyn.svg")
    idyn = json.loads(ctl("inverse-dynamics", "default", "walk", "--svg", figure))
    check(idyn["frames"] > 100 and abs(idyn["mean_vertical_force_share"] - 1) < 0.05,
          f"animctl inverse-dynamics: the ground carries the body ({idyn['mean_vertical_force_share']:.3f} of its weight)")
    check(open(figure).read().count("<polyline") == 3 + 6, "animctl inverse-dynamics --svg: the feet, the residual "
          "and six torque curves")
    ctl("inverse-dynamics", "default", "walk", "--step", "9", expect=1)
    # A character animctl makes, walks and asks about: its last second from its history.
    mine = json.loads(ctl("inverse-dynamics", "--create", "--seconds", "1", "--walk", "1.5"))
    check(mine["character"] > 0 and mine["frames"] == 60 and abs(mine["mean_vertical_force_share"] - 1) < 0.1,
          f"animctl inverse-dynamics --create: 60 ticks of character {mine['character']}, "
          f"{mine['mean_vertical_force_share']:.3f} of its weight on the ground")
    ctl("inverse-dynamics", "--character", "5", expect=2)  # no --seconds or --ticks
    ctl("inverse-dynamics", "--character", "5", "--seconds", "1", expect=1)  # no such character here
    # A physical character pushed at the chest from behind: it staggers and is back to motion matching.
    changes = [json.loads(line) for line in ctl("push", "default", "--seconds", "2.5",
                                                "0.3:impulse:Chest:0,0,40@0,0.05,0").splitlines()]
    states = [c["state"] for c in changes]
    check(states[:2] == ["kinematic", "powered"] and states[-1] == "kinematic" and "recovering" in states and
          0.28 < changes[1]["time"] < 1.0, f"animctl push: (powered first seen at {changes[1]['time']:.3f} s) {' -> '.join(states)}")
    ctl("push", "default", "0.1:impulse:Tail:0,0,40", expect=1)


def main():
    data = tempfile.mkdtemp(prefix="animserver-cli-")
    bandai = os.path.join(SHARED, "data", "mocap", "bandai-namco")
    have_mocap = os.path.isdir(bandai)
    if not have_mocap and os.environ.get("CI") == "true":
        raise AssertionError(f"{bandai} missing under CI")

    usage_errors_without_server()

    # animdb on real data (or the procedural database when the mocap is absent).
    out = os.path.join(data, "mocap.animdb")
    if have_mocap:
        run("animdb", "build", "-o", out, "--name", "mocap", "--mirror", "--tag", "walk=walk", "--tag", "run=run",
            bandai)
    else:
        print("skipped: real mocap not found, building the procedural database instead")
        run("animdb", "build", "-o", out, "--procgen", "--name", "mocap")
    info = json.loads(run("animdb", "info", out, "--json"))
    check(info["frames"] > 4000 and len(info["ranges"]) > 10, "animdb info reads the file it built")
    check(info["features"]["dims"] == 27, "default schema: 27 dims")
    hits = run("animdb", "search", out, "--frame", "500", "--k", "3", "--method", "boxes").splitlines()
    check(len(hits) == 3 and "frame     500" in hits[0], "animdb search finds the query frame first")
    run("animdb", "search", out, "--frame", "999999999", expect=2)

    server = subprocess.Popen([os.path.join(BUILD, "animserver"), "--port", "0", "--data-dir", data],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = server.stdout.readline().strip().rsplit(":", 1)[1]
        ctl = lambda *a, expect=0: run("animctl", "--port", port, "--json", *a, expect=expect)
        hello = json.loads(ctl("hello"))
        check("search" in hello["capabilities"], "animctl hello")
        with animserver.Client("127.0.0.1", int(port)) as python_client:
            limits = python_client.server.limits
        check(hello["limits"]["max_pose_frames"] == limits.max_pose_frames and
              hello["limits"]["max_ids"] == limits.max_ids and hello["limits"]["tick_rate"] == limits.tick_rate and
              hello["limits"]["world_limit"] == limits.world_limit == 10000 and
              hello["limits"]["max_trackers_ahead"] == limits.max_trackers_ahead == 31 and
              hello["limits"]["max_trackers_waiting"] == limits.max_trackers_waiting == 32 and
              hello["limits"]["max_push_ahead"] == limits.max_push_ahead == 36000 and
              hello["limits"]["max_pushes_pending"] == limits.max_pushes_pending == 8 and
              hello["admin"] is True, "animctl --json hello: every limit the hello carries (it gave six)")
        # Every field of Limits, by its proto name, as the Python client decodes it (fields 16-25 were missing).
        fields = [f.name for f in limits.DESCRIPTOR.fields]
        differ = {n: (hello["limits"].get(n), getattr(limits, n)) for n in fields
                  if hello["limits"].get(n) != getattr(limits, n)}
        check(len(fields) >= 30 and not differ and set(hello["limits"]) == set(fields),
              f"animctl --json hello: all {len(fields)} Limits fields; differing (animctl, Python): {differ}")
        check(json.loads(ctl("ping", "--count", "2").splitlines()[1])["seq"] == 1, "animctl ping")
        loaded = json.loads(ctl("db", "load", "mocap"))
        check(loaded["frames"] == info["frames"], "animctl db load serves what animdb built")
        names = [d["name"] for d in json.loads(ctl("db", "list"))]
        check(names == ["default", "mocap"], "animctl db list")
        described = json.loads(ctl("db", "describe", "mocap"))
        check(len(described["bones"]) == len(info["bones"]), "animctl db describe")
        # `stream --id` of another connection's character describes that character's database (it
        # described "default" whatever the character ran on: a header of 22 bones over poses of 23).
        with animserver.Client("127.0.0.1", int(port)) as owner:
            watched = owner.create_characters("mocap", [{}]).characters[0]
            lines = run("animctl", "--port", port, "stream", "--id", str(watched), "--frames", "1").splitlines()
            header, frame = json.loads(lines[0]), json.loads(lines[1])
            check(header["database"] == "mocap" and 3 * len(header["bones"]) == len(frame["poses"][0]["positions"]),
                  "animctl stream --id: the header describes the character's own database")
            # The watched character destroyed by its owner mid-stream: the frame saying so is the last and
            # animctl exits 0 (it waited for frames that never come, then failed with a timeout).
            stream = subprocess.Popen([os.path.join(BUILD, "animctl"), "--port", port, "--timeout", "60000", "stream",
                                       "--id", str(watched), "--id", str(watched), "--frames", "100000"],
                                      stdout=subprocess.PIPE, text=True)
            first = stream.stdout.readline() + stream.stdout.readline()
            owner.destroy_characters([watched])
            rest = stream.stdout.read()  # until animctl exits: a tick after the destroy (before: its 60 s timeout)
            stream.wait(timeout=30)
            lines = (first + rest).splitlines()
            check(stream.returncode == 0 and json.loads(lines[-1]).get("gone") == [watched] and
                  all("gone" not in json.loads(line) for line in lines[1:-1]),
                  f"animctl stream --id: ends when its character is gone ({len(lines) - 1} frames, exit 0)")
        found = json.loads(ctl("search", "mocap", "--frame", "500", "--k", "4", "--explain", "--method", "fast"))
        check(found["matches"][0]["frame"] == 500 and len(found["explain"]) == 7, "animctl search with explanation")
        search_by_bone_terms(port)
        pose = json.loads(ctl("pose", "mocap", "10", "--global").splitlines()[0])
        check(len(pose["global_positions"]) == 3 * len(info["bones"]), "animctl pose")
        cost = json.loads(ctl("transition-cost", "default", "600", "1200", "--bone", "LeftFoot"))
        # Equal when the offset never crosses zero, up to float rounding.
        check(cost["exact"] >= cost["approximate"] * (1 - 1e-6) >= 0, "animctl transition-cost: exact >= approximate")
        offsets = [json.loads(line) for line in ctl("inertialize", "default", "600", "1200", "--t", "0.0").splitlines()]
        check(len(offsets) == len(json.loads(ctl("db", "describe", "default"))["bones"]), "animctl inertialize")
        spring = json.loads(ctl("spring", "halflife", "--alpha", "0.05", "--t", "0.3"))
        check(0 < spring["halflife"] < 0.3, "animctl spring halflife")
        erp = json.loads(ctl("spring", "erp-cfm", "--stiffness", "500", "--damping", "20", "--dt", "0.0166667"))
        check(0 < erp["erp"] < 1 and erp["cfm"] > 0, "animctl spring erp-cfm")
        svg = os.path.join(data, "walk.svg")
        run("animctl", "--port", port, "render", "mocap", "100", "--count", "60", "--step", "6", "-o", svg)
        drawing = open(svg).read()
        check(drawing.startswith("<svg") and drawing.count("<line") > 100, "animctl render draws a filmstrip")
        ctl("db", "reload", "mocap")
        ctl("db", "unload", "mocap")
        ctl("search", "mocap", "--frame", "1", expect=1)
        check(True, "reload, unload, then the name is gone (exit 1)")
        ctl("search", expect=2)
        ctl("search", "default", "--k", "x", expect=2)
        check(True, "usage errors exit 2")
        # --help after a command prints the usage and sends nothing (it once ran the command: `animctl
        # shutdown --help` shut the server down); a command taking no arguments refuses one.
        for command in (["shutdown"], ["stats"], ["hello"], ["db", "list"], ["machine", "list"], ["ping"]):
            check("usage: animctl" in ctl(*command, "--help"), f"animctl {' '.join(command)} --help: the usage")
        for command in (["shutdown", "now"], ["stats", "x"], ["hello", "x"], ["db", "list", "x"],
                        ["machine", "list", "x"]):
            ctl(*command, expect=2)
        check(json.loads(ctl("hello"))["protocol_version"] >= 1, "the server is still up after --help and extras")
        json_errors_and_help(port, data)
        load = json.loads(ctl("load", "--connections", "4", "--pipeline", "4", "--duration", "0.5", "--mix",
                              "ping=1,search=1"))
        check(load["requests"] > 100 and load["errors"] == 0, "animctl load")
        lines = run("animctl", "--port", port, "stream", "--create", "3", "--input", "goal:2,4,1.4", "--global",
                    "--encoding", "quantized", "--frames", "20").splitlines()
        header, frames = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
        check(header["type"] == "header" and len(header["bones"]) == len(header["parents"]), "animctl stream: header")
        check(len(frames) == 20 and all(len(f["poses"]) == 3 for f in frames), "animctl stream: 20 frames of 3")
        # Every tick the server ran: numbers grow by one, or by more where a loaded machine made the
        # server skip deadlines (folded into the next tick), and no frame was dropped.
        check(all(frames[i + 1]["tick"] > frames[i]["tick"] for i in range(19)) and
              all(f["dropped"] == 0 for f in frames), "animctl stream: every tick")
        check(len(frames[0]["poses"][0]["global_positions"]) == 3 * len(header["bones"]), "animctl stream --global")
        stream_regions(port)
        svg = os.path.join(data, "tour.svg")
        run("animctl", "--port", port, "render", "--stream", "--create", "1", "--input", "script:tour",
            "--seconds", "3", "--view", "top", "-o", svg)
        drawing = open(svg).read()
        check(drawing.startswith("<svg") and drawing.count("<line") > 100, "animctl render --stream draws a filmstrip")
        machines_and_graphs(ctl, data, port)
        history_and_params(ctl, port)
        stats = json.loads(ctl("stats"))
        check(stats["ticks"] > 0 and stats["frames_sent"] >= 20 and stats["characters"] == 0, "animctl stats")
        check(json.loads(ctl("shutdown")) == {"shutting_down": True}, "animctl --json shutdown says so")
        check(server.wait(timeout=10) == 0, "animctl shutdown: the server drains and exits 0")
    finally:
        if server.poll() is None:
            server.terminate()
        code = server.wait(timeout=10)
    check(code == 0, "server exits 0")
    print("cli: passed")


if __name__ == "__main__":
    main()

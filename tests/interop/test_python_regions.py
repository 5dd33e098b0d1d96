#!/usr/bin/env python3
"""Region subscriptions (docs/protocol.md, "Region subscriptions") through the
Python package against the real server: walkers crossing a circle are
announced in ``frame.entered`` and ``frame.left`` once each and posed only
while inside; distance bands deliver each member at its band's rate; the cap
keeps the nearest; following centres the region on the caller's character
(asyncio client); a bad region raises the error class of the server's code,
its message naming the field. Run by tests/run.sh with ANIM_BUILD_DIR set.
"""
import asyncio
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import Server, animserver, check  # noqa: E402

pb = animserver.pb

WALKERS = 12
RING = 7.0      # m: where the walkers start, around the region's centre
CIRCLE = 4.0    # m: the region's radius
WALK_SPEED = 2.0
# Membership at tick t is decided from the roots tick t-1 left: a member's root
# in the frame may be one tick's walk past the edge (2 m/s at 60 Hz: 0.033 m).
EDGE_SLACK_M = 0.1


def frames_until(sub, seconds, done=lambda: False):
    """The frames of ``sub`` for up to ``seconds`` (a region sends only frames
    that carry something: a quiet stretch is a timeout, not an end)."""
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and not done():
        try:
            frame = sub.next(timeout=min(0.25, max(0.01, end - time.monotonic())))
        except animserver.TimedOutError:
            continue
        if frame is None:
            break
        out.append(frame)
    return out


def test_walkers_enter_and_leave_once(owner, viewer, version, bones):
    centre = (0.0, 200.0)
    placements, inputs = [], []
    for i in range(WALKERS):
        angle = 2 * math.pi * i / WALKERS
        placements.append({"x": centre[0] + RING * math.sin(angle), "z": centre[1] + RING * math.cos(angle),
                           "facing": angle + math.pi})
    ids = list(owner.create_characters("default", placements).characters)
    for i, c in enumerate(ids):
        angle = 2 * math.pi * i / WALKERS + 0.3  # across, a little off the centre so they do not all meet there
        inputs.append(animserver.goal(c, centre[0] - RING * math.sin(angle), centre[1] - RING * math.cos(angle),
                                      WALK_SPEED))
    sub = viewer.subscribe_region(CIRCLE, centre=centre)
    check(frames_until(sub, 0.3) == [], "region: nobody inside, no frame")
    owner.set_inputs(inputs)
    entered = {c: 0 for c in ids}
    left = {c: 0 for c in ids}
    members, errors_seen = set(), []

    def all_through():
        return all(entered[c] and left[c] for c in ids)

    frames = []
    end = time.monotonic() + 15.0
    while time.monotonic() < end and not all_through():
        for frame in frames_until(sub, 0.5):
            frames.append(frame)
            for e in frame.entered:
                if e.character in members:
                    errors_seen.append(f"tick {frame.tick}: {e.character} entered twice without leaving")
                entered[e.character] += 1
                members.add(e.character)
                if e.character not in frame:
                    errors_seen.append(f"tick {frame.tick}: {e.character} entered without its pose")
                if (e.database, e.database_version, e.bones) != ("default", version, bones):
                    errors_seen.append(f"tick {frame.tick}: {e} is not default/{version:#x}/{bones} bones")
            for c in frame.left:
                if c not in members:
                    errors_seen.append(f"tick {frame.tick}: {c} left without having entered")
                left[c] += 1
                members.discard(c)
                if c in frame:
                    errors_seen.append(f"tick {frame.tick}: {c} left yet is posed")
            for row, c in enumerate(frame.characters):
                c = int(c)
                d = math.hypot(frame.positions[row, 0, 0] - centre[0], frame.positions[row, 0, 2] - centre[1])
                if c not in members:
                    errors_seen.append(f"tick {frame.tick}: {c} posed but not a member")
                elif d > CIRCLE + EDGE_SLACK_M:
                    errors_seen.append(f"tick {frame.tick}: member {c} posed {d:.3f} m from the centre")
    check(not errors_seen, "region: every arrival with its pose and database, posed only while inside" +
          (f": {len(errors_seen)} problems, first {errors_seen[0]}" if errors_seen else ""))
    twice = [c for c in ids if entered[c] > 1 or left[c] > 1]
    crossed = sum(1 for c in ids if entered[c] == 1 and left[c] == 1)
    check(not twice and crossed >= WALKERS * 3 // 4,
          f"region: {crossed} of {WALKERS} walkers entered and left once in {len(frames)} frames"
          f"{f'; more than once: {twice}' if twice else ''}")
    owner.destroy_characters(ids)
    sub.close()


def test_bands(owner, viewer):
    centre = (0.0, -200.0)
    distances, divisors, each = (2.0, 10.0, 25.0), (1, 4, 15), 6
    placements = []
    for ring, d in enumerate(distances):
        for i in range(each):
            angle = 2 * math.pi * i / each
            placements.append({"x": centre[0] + d * math.sin(angle), "z": centre[1] + d * math.cos(angle)})
    ids = list(owner.create_characters("default", placements).characters)
    sub = viewer.subscribe_region(40.0, centre=centre, bands=[(5.0, 1), animserver.Band(15.0, 4), (40.0, 15)],
                                  encoding="quantized")
    window = int(round(2 * sub.tick_rate))  # 2 s of ticks, after the first frame
    frames = frames_until(sub, 4.0, lambda: False)
    first = frames[0].tick if frames else 0
    check(frames and {e.character for e in frames[0].entered} == set(ids) and set(int(c) for c in frames[0].characters)
          == set(ids), "bands: the first frame announces all 18 with their poses (whatever their band)")
    posed = {c: 0 for c in ids}
    for f in frames:
        if first + 10 <= f.tick < first + 10 + window:
            for c in f.characters:
                posed[int(c)] += 1
    worst = []
    for k, c in enumerate(ids):
        expected = window // divisors[k // each]
        if abs(posed[c] - expected) > 1:
            worst.append(f"{c} at {distances[k // each]:.0f} m: {posed[c]} poses, expected {expected}")
    rates = [sum(posed[c] for c in ids[r * each:(r + 1) * each]) / each / 2.0 for r in range(3)]
    check(not worst, f"bands: poses per second by band {', '.join(f'{r:.1f}' for r in rates)} "
          f"(expected {', '.join(f'{sub.tick_rate / d:.1f}' for d in divisors)})" +
          (f": {worst[0]}" if worst else ""))
    check(all(np.isfinite(f.rotations[:len(f)]).all() for f in frames), "bands: quantized poses decoded")
    sub.close()
    owner.destroy_characters(ids)


def test_cap(owner, viewer):
    centre, count, cap = (200.0, 0.0), 8, 3
    ids = list(owner.create_characters("default", [{"x": centre[0] + 1.5 * (count - i), "z": centre[1]}
                                                   for i in range(count)]).characters)
    sub = viewer.subscribe_region(box=(20.0, 4.0), centre=centre, max_characters=cap)
    frames = frames_until(sub, 0.5)
    nearest = set(ids[-cap:])
    check(frames and {e.character for e in frames[0].entered} == nearest and
          all(set(int(c) for c in f.characters) == nearest for f in frames),
          f"max_characters={cap}: the {cap} nearest of {count} in a box, in every frame")
    owner.destroy_characters(ids[-1:])
    frames = frames_until(sub, 0.5)
    check(any(f.left == (ids[-1],) for f in frames) and
          any([e.character for e in f.entered] == [ids[-1 - cap]] for f in frames),
          "max_characters: the nearest destroyed leaves, the next nearest enters")
    sub.close()
    owner.destroy_characters(ids[:-1])


def test_errors(owner, viewer):
    other = owner.create_characters("default", [{"x": 0.0, "z": 0.0}]).characters[0]
    cases = [
        (dict(radius=float("nan")), animserver.NonFiniteError, "subscribe.region.radius"),
        (dict(radius=-1.0), animserver.InvalidArgumentError, "subscribe.region.radius"),
        (dict(radius=3.0, box=(2.0, 2.0)), animserver.InvalidArgumentError, "not both"),
        (dict(), animserver.InvalidArgumentError, "subscribe.region: set radius"),
        (dict(radius=3.0, centre=(1e9, 0.0)), animserver.InvalidArgumentError, "subscribe.region.centre.x"),
        (dict(radius=30.0, bands=[(10.0, 1), (5.0, 2)]), animserver.InvalidArgumentError,
         "subscribe.region.bands[1].radius = 5: bands must be in order"),
        (dict(radius=30.0, bands=[(float(i + 1), 1) for i in range(9)]), animserver.LimitError,
         "subscribe.region.bands = 9: at most 8"),
        (dict(radius=30.0, bands=[(10.0, 1)], rate_divisor=3), animserver.InvalidArgumentError,
         "subscribe.rate_divisor = 3: with region.bands"),
        (dict(radius=3.0, follow=424242), animserver.NotFoundError, "subscribe.region.follow = 424242"),
        (dict(radius=3.0, follow=other), animserver.NotPermittedError, "subscribe.region.follow"),
        # refused by the package before sending (protobuf's own error would name no field)
        (dict(radius=3.0, max_characters=-1), animserver.InvalidArgumentError, "subscribe.region.max_characters"),
        (dict(radius=3.0, bands=[(1.0, -2)]), animserver.InvalidArgumentError,
         "subscribe.region.bands[0].rate_divisor"),
        (dict(radius=3.0, bands=[(1.0,)]), animserver.InvalidArgumentError, "subscribe.region.bands[0]"),
    ]
    wrong = []
    for kwargs, error, field in cases:
        try:
            viewer.subscribe_region(**kwargs)
            wrong.append(f"{kwargs}: accepted")
        except animserver.AnimError as e:
            if type(e) is not error or field not in e.message:
                wrong.append(f"{kwargs}: {type(e).__name__} {e.message!r}, expected {error.__name__} naming {field}")
    check(not wrong, f"a bad region raises the server's error naming the field ({len(cases)} cases)" +
          (f": {'; '.join(wrong)}" if wrong else ""))
    check(viewer.ping(b"still").payload == b"still", "the connection is usable after the refusals")
    owner.destroy_characters([other])


async def async_follow(port):
    async with animserver.AsyncClient("127.0.0.1", port) as client:
        me = (await client.create_characters("default", [{"x": -150.0, "z": -150.0}])).characters[0]
        async with await client.subscribe_region(2.0, follow=me) as sub:
            frame = await sub.next()
            check(frame is not None and [e.character for e in frame.entered] == [me] and me in frame and
                  frame.entered[0].bones == frame.bones[frame.row(me)],
                  "asyncio subscribe_region(follow=): the followed character enters with its pose")
        await client.destroy_characters([me])


def main():
    server = Server()
    try:
        owner = animserver.Client(server.host, server.port, client_name="regions-owner")
        viewer = animserver.Client(server.host, server.port, client_name="regions-viewer")
        summary = owner.describe_database("default").summary
        test_errors(owner, viewer)
        test_walkers_enter_and_leave_once(owner, viewer, summary.version, summary.bones)
        test_bands(owner, viewer)
        test_cap(owner, viewer)
        asyncio.run(async_follow(server.port))
        owner.close()
        viewer.close()
    finally:
        server.stop()
    print("python regions: passed")


if __name__ == "__main__":
    main()

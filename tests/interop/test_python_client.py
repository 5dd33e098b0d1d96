#!/usr/bin/env python3
"""The Python package (python/animserver) against the real server: every
request kind through the blocking client (the test fails when the proto has a
request the package has no method for), the asyncio client, errors as
exceptions with the server's code and message, poses as numpy arrays (forward
kinematics of the local pose = the server's global pose), and the two stream
encodings of the same ticks agreeing within the quantization steps, decoded by
the package's vectorised numpy decoder and by a scalar decoder written here
from the description in docs/protocol.md. Run by tests/run.sh with ANIM_BUILD_DIR set.
"""
import asyncio
import math
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import BUILD, Server, animserver, check  # noqa: E402

pb = animserver.pb
errors = animserver.errors

# Quantization bounds on the received stream (docs/protocol.md, "Streams"
# and "Encodings and conventions": 16-bit smallest-three rotations, 1/8192 m local steps, 1e-4 m root
# steps; half a step is the rounding error, plus float32 noise).
ROTATION_RAD = 1e-4
LOCAL_POSITION_M = 0.5 / 8192 + 1e-6
ROOT_POSITION_M = 0.5e-4 + 1e-6
FK_M = 1e-4  # forward kinematics in float32 against the server's global positions
# A graph walk on the default database along a 10 m line from its idle node: the line's end within
# FOLLOW_START_S + 10 m / (FOLLOW_MIN_PACE * DEFAULT_DB_EXPECTED_SPEED) = 15.3 s (tests/support/follow_limits.h:
# the walk_start clip reaches walking speed 2 s in; at least half the expected speed, the walk's 1.5 m/s;
# measured 4.2 s). query_graph ends a walk within 0.05 m of an open path's end, or when the character
# arrived (within ANIM_PATH_ARRIVE_DISTANCE, core/graph/graph_path.h: it stops where its stopping clip ends).
FOLLOW_START_S = 2.0
FOLLOW_MIN_PACE = 0.5
DEFAULT_DB_EXPECTED_SPEED = 1.5
PATH_END_M = 0.3  # ANIM_PATH_ARRIVE_DISTANCE


class Recording(animserver.Client):
    """The blocking client, remembering which request kinds it sent."""
    sent = set()

    def send(self, kind, fields=None, convert=None):
        Recording.sent.add(kind)
        return super().send(kind, fields, convert)


def scalar_quantized(data, rotations_only):
    """The ENCODING_QUANTIZED layout decoded one value at a time, from the
    description in docs/protocol.md alone (the reference for the numpy decoder)."""
    root = [v * 1e-4 for v in struct.unpack_from("<3i", data, 0)]
    n = (len(data) - 12) // 7 if rotations_only else (len(data) - 12 + 6) // 13
    rotations = []
    for b in range(n):
        code = int.from_bytes(data[12 + 7 * b:19 + 7 * b], "little")
        dropped = (code >> 48) & 3
        parts = [struct.unpack("<h", struct.pack("<H", (code >> (16 * i)) & 0xFFFF))[0] / 32767.0 / math.sqrt(2.0)
                 for i in range(3)]
        q = [0.0] * 4
        slots = iter(parts)
        for i in range(4):
            if i != dropped:
                q[i] = next(slots)
        q[dropped] = math.sqrt(max(0.0, 1.0 - sum(c * c for c in q)))
        rotations.append(q)
    positions = [root]
    if not rotations_only:
        for b in range(1, n):
            positions.append([v / 8192.0 for v in struct.unpack_from("<3h", data, 12 + 7 * n + 6 * (b - 1))])
    return np.array(positions), np.array(rotations)


def angle_between(a, b):
    """Rotation angle between (..., 4) quaternions (q and -q are one rotation),
    as 2 atan2(|v|, |w|) of a^-1 b: arccos of a dot product near 1 would turn
    float32 rounding into 1e-3 rad."""
    a = a.astype(np.float64) * np.array([1.0, -1.0, -1.0, -1.0])
    relative = animserver.quat_mul(a, b.astype(np.float64))
    return 2.0 * np.arctan2(np.linalg.norm(relative[..., 1:], axis=-1), np.abs(relative[..., 0]))


def worst(what, err, limit, names):
    """Checks max(err) <= limit, naming the worst character/bone."""
    index = np.unravel_index(np.argmax(err), err.shape)
    bone = names[index[-1]] if len(index) and err.ndim >= 2 else "-"
    check(float(err.max()) <= limit, f"{what}: worst {float(err.max()):.2e} (<= {limit:.1e}) at {index}, bone {bone}")


def same_ticks(float_sub, quant_sub):
    """A frame of each subscription from the same tick."""
    a, b = float_sub.next(), quant_sub.next()
    while a.tick != b.tick:
        if a.tick < b.tick:
            a = float_sub.next()
        else:
            b = quant_sub.next()
    return a, b


def test_session_and_databases(client, data_dir):
    check(client.server.protocol_version == 1 and "ping" in client.server.capabilities,
          "hello on connect: protocol 1, capabilities")
    check(client.server.admin, "no tokens: the connection is admin")
    check(client.ping(b"hi").payload == b"hi", "ping echoes its payload")
    pings = [client.send("ping", {"payload": b"p%d" % i}) for i in range(50)]
    answers = [p.result() for p in reversed(pings)]
    check([a.payload for a in reversed(answers)] == [b"p%d" % i for i in range(50)],
          "50 pipelined pings, matched by id")
    names = [d.name for d in client.list_databases().databases]
    check("default" in names, f"list_databases: {names}")
    db = client.describe_database("default")
    check(len(db.bones) == 22 and db.bones[0].parent == -1, "describe_database: 22 bones, root first")
    check(all(0 <= b.parent < i for i, b in enumerate(db.bones) if i), "parents precede children")
    subprocess.run([os.path.join(BUILD, "animdb"), "build", "-o", os.path.join(data_dir, "small.animdb"),
                    "--procgen", "--name", "small"], check=True, stdout=subprocess.DEVNULL)
    loaded = client.load_database("small")
    check(loaded.summary.name == "small" and loaded.summary.frames > 0, "load_database from the data directory")
    check(client.reload_database("small").summary.version == loaded.summary.version,
          "reload_database: same file, same version")
    client.unload_database("small")
    check("small" not in [d.name for d in client.list_databases().databases], "unload_database")
    return db


def test_poses_and_search(client, db):
    frames = client.pose("default", 200, count=30, local=True, global_=True, velocities=True)
    check(frames.local_positions.shape == (30, 22, 3) and frames.global_rotations.shape == (30, 22, 4),
          "pose: (frames, bones, 3|4) arrays")
    check(frames.local_velocities is not None and frames.contacts.shape == (30, len(db.contact_bones)),
          "pose: velocities and contacts")
    parents = [b.parent for b in db.bones]
    gp, gr = animserver.forward_kinematics(parents, frames.local_positions, frames.local_rotations)
    worst("forward kinematics of the local pose = the server's global positions (m)",
          np.linalg.norm(gp - frames.global_positions, axis=-1), FK_M, [b.name for b in db.bones])
    worst("... and global rotations (rad)", angle_between(gr, frames.global_rotations), 1e-5,
          [b.name for b in db.bones])

    result = client.search("default", from_frame={"frame": 100}, k=3, explain=True, include_pose=True)
    check(result.best.frame == 100 and result.best.cost == 0.0, "search: a frame's own features find it at cost 0")
    check([m.cost for m in result.matches] == sorted(m.cost for m in result.matches), "matches by ascending cost")
    check(len(result.explanation) == len(db.features) and result.margin >= 0.0,
          f"explain: the cost split by {len(db.features)} feature groups, margin {result.margin:.3g}")
    check(result.best.pose is not None and result.best.pose.local_rotations.shape == (22, 4),
          "include_pose: the match's pose as arrays")
    # A query and keywords together: the keywords add to it (k was dropped without a word when a query was given).
    check(len(client.search("default", {"from_frame": {"frame": 100}}, k=3).matches) == 3 and
          len(client.search("default", pb.SearchQuery(from_frame={"frame": 100}, k=1), k=4).matches) == 4,
          "search(db, query, k=K): the keyword is not dropped (mapping or message)")
    batch = client.batch_search("default", [{"from_frame": {"frame": f}} for f in (10, 500, 900)])
    check([r.best.frame for r in batch] == [10, 500, 900], "batch_search answered in order")


def test_inertialization(client):
    def pose(x, v):
        return animserver.pose_state([[0, 0, 0], [x, 0, 0]], [[1, 0, 0, 0], [1, 0, 0, 0]], [[0, 0, 0], [v, 0, 0]])
    state = client.inertialize_transition(pose(1.0, 0.0), pose(0.0, 0.0)).state
    check(abs(state.offset_positions[3] - 1.0) < 1e-6 and len(state.anchor) == 14,
          "inertialize_transition: offset = source - destination, anchor of 14")
    evaluated = client.inertialize_evaluate(state, pose(0.0, 0.0), halflife=0.2, t=0.1)
    y = 2.0 * math.log(2.0) / 0.2
    expect = math.exp(-y * 0.1) * (1.0 + y * 0.1)
    check(abs(evaluated.output.positions[3] - expect) < 1e-5, "inertialize_evaluate: closed-form decay")
    cost = client.transition_cost(100, 900, halflife=0.1, database="default")
    check(cost.exact > 0.0 and len(cost.bones) == 22, f"transition_cost: exact {cost.exact:.3f} over 22 bones")
    tuned = client.spring_tune(fraction={"alpha": 0.5, "t": 0.3})
    yt = 2.0 * math.log(2.0) / tuned.halflife * 0.3
    check(abs(math.exp(-yt) * (1.0 + yt) - 0.5) < 1e-6, f"spring_tune: half-life {tuned.halflife:.4f} s "
          "puts a spring from rest at half its offset after 0.3 s")


def test_characters_and_streams(client, db):
    names = [b.name for b in db.bones]
    ids = client.create_characters("default", [{"x": (i % 10) * 2.0, "z": (i // 10) * 2.0} for i in range(100)],
                                   params={"search_interval": 6}).characters
    check(len(ids) == 100, "create_characters: 100 ids")
    client.set_inputs([animserver.stick(c, 0.0, 0.8) if i % 2 else animserver.goal(c, 5.0, 5.0)
                       for i, c in enumerate(ids)])
    exact = client.subscribe(owned=True, encoding="float", global_positions=True)
    packed = client.subscribe(owned=True, encoding="quantized")
    lean = client.subscribe(ids[:10], encoding="quantized", rotations_only=True)
    for _ in range(30):
        a, b = same_ticks(exact, packed)
    check(a.positions.shape == (100, 22, 3) and b.rotations.shape == (100, 22, 4),
          "both encodings: (characters, bones, 3|4) arrays of the same tick")
    check((a.characters == b.characters).all() and (a.frames == b.frames).all() and (a.contacts == b.contacts).all(),
          "same characters, frames and contacts in both encodings")
    worst("quantized rotations vs floats (rad)", angle_between(a.rotations, b.rotations), ROTATION_RAD, names)
    worst("quantized root positions vs floats (m)", np.abs(a.positions[:, :1] - b.positions[:, :1]).max(axis=-1),
          ROOT_POSITION_M, ["root"])
    worst("quantized local positions vs floats (m)", np.abs(a.positions[:, 1:] - b.positions[:, 1:]).max(axis=-1),
          LOCAL_POSITION_M, names[1:])
    reference = [scalar_quantized(p.quantized, False) for p in b.message.poses]
    check(all(np.allclose(r[0], b.positions[i], atol=1e-6) and np.allclose(r[1], b.rotations[i], atol=1e-6)
              for i, r in enumerate(reference)), "numpy decoder = scalar decoder on 100 characters")
    gp, _ = a.global_pose([bone.parent for bone in db.bones])
    worst("forward kinematics of the stream = its global positions (m)",
          np.linalg.norm(gp - a.global_positions, axis=-1), FK_M, names)
    flags = a.contact_flags(len(db.contact_bones))
    check(flags.shape == (100, 2) and flags.any(), "contact bits as flags")
    ordinary = animserver.StreamFrame.from_message(pb.StreamMessage.FromString(a.message.SerializeToString()))
    check(np.array_equal(ordinary.rotations, a.rotations) and np.array_equal(ordinary.positions, a.positions) and
          np.array_equal(ordinary.global_positions, a.global_positions),
          "floats through the stream view (bytes) = through the ordinary class")
    unpacked = b"".join(bytes([0x25]) + struct.pack("<f", v) for v in a.rotations[0, 0])  # field 4, fixed32 each
    pose = bytes([0x08, 0x07, 0x1a, 12]) + struct.pack("<3f", *a.positions[0, 0]) + unpacked
    view = animserver._proto.StreamView.FromString(bytes([0x12, len(pose) + 2, 0x22, len(pose)]) + pose).stream
    decoded = animserver.StreamFrame.from_message(view)
    check(np.array_equal(decoded.rotations[0, 0], a.rotations[0, 0]) and decoded.characters[0] == 7,
          "floats a sender did not pack decode through the ordinary class")
    frame = lean.next()
    check(frame.positions.shape == (10, 1, 3) and frame.rotations.shape == (10, 22, 4),
          "rotations_only: root position and 22 rotations")
    ref = scalar_quantized(frame.message.poses[0].quantized, True)
    check(np.allclose(ref[1], frame.rotations[0], atol=1e-6), "rotations_only decoded as the scalar reference")

    state = client.character_state(ids[1], offsets=True)
    check(len(state.trajectory) > 0 and len(state.inertializer.offset_rotations) == 88,
          "character_state: trajectory and per-bone offsets")
    check(state.database == "default" and state.database_version == db.summary.version,
          "character_state: its database's name and version")
    check(len(state.query) == 0 and [f.bone for f in state.feet] == list(db.contact_bones),
          "character_state: a foot lock per contact bone, no query unless asked")
    state = client.character_state(ids[1], query=True)
    check(len(state.query) == db.summary.feature_dims, f"character_state query: {len(state.query)} normalized features")
    found = client.search("default", features=list(state.query), current_frame={"frame": state.frame},
                          ignore_surrounding=20, ignore_range_end=20, k=2, explain=True, include_features=True)
    query, row = found.query, found.best.features
    check(query is not None and np.allclose(query, np.asarray(state.query, np.float32)) and row is not None,
          "search include_features: the query searched with and the match's feature row")
    split = {}
    for group, label in zip(db.features, found.explanation):  # the explanation is in schema order
        cols = slice(group.first_column, group.first_column + group.dims)
        split[label] = float(np.sum((query[cols].astype(np.float64) - row[cols]) ** 2))
    worst_group = max(split, key=lambda g: abs(split[g] - found.explanation[g]))
    check(all(abs(split[g] - found.explanation[g]) <= 1e-4 * (1 + found.explanation[g]) for g in split),
          f"each group's cost is the squared distance of its columns (worst {worst_group}: "
          f"{split[worst_group]:.6f} against {found.explanation[worst_group]:.6f})")
    client.update_subscription(exact, encoding="quantized")
    switched = exact.next()
    while switched.encoding != pb.ENCODING_QUANTIZED:
        switched = exact.next()
    check(switched.rotations.shape == (100, 22, 4), "update_subscription switches the encoding")
    lean.close()
    check(lean.next() is None and list(lean) == [], "unsubscribe ends the stream")
    named = client.subscribe(ids[:12], rate_divisor=2)
    check(client.destroy_characters(ids[:10]).destroyed == 10, "destroy_characters")
    gone = set()
    for _ in range(60):  # a bound: the next frame reports them
        gone.update(named.next().gone)
        if len(gone) >= 10:
            break
    check(gone == set(ids[:10]), "destroyed characters reported in a named subscription's gone")
    check(named.next().characters.tolist() == ids[10:12], "... and dropped from it")
    named.close()
    frame = client.next_frame()
    check(frame.subscription in (exact.id, packed.id), "next_frame: any subscription's oldest frame")
    stats = client.server_stats()
    check(stats.characters >= 90 and stats.frames_sent > 0, f"server_stats: {stats.characters} characters")


def test_errors(client, port):
    try:
        client.describe_database("nope")
        raise AssertionError("describe_database('nope') succeeded")
    except errors.NotFoundError as e:
        check(e.code == pb.ERROR_NOT_FOUND and "nope" in e.message and isinstance(e, animserver.AnimError),
              f"NotFoundError carries the code and message: {e}")
    for call, cls in ((lambda: client.pose("default", 10 ** 9), errors.OutOfRangeError),
                      (lambda: client.describe_database("default\0junk"), errors.BadNameError),
                      (lambda: client.search("default", features=[float("nan")]), errors.NonFiniteError),
                      (lambda: client.set_inputs([animserver.stick(1, 1.2, 0.9)]), animserver.AnimError),
                      (lambda: client.hello(protocol_version=99), errors.VersionError),
                      (lambda: client.call("no_such_request"), errors.UnsupportedError)):
        try:
            call()
            raise AssertionError(f"{cls.__name__} expected")
        except cls as e:
            check(e.message != "", f"{type(e).__name__}: {e.message}")
    # A value the proto's type cannot hold (a frame of -1, a string for a number, an unknown field) is an
    # InvalidArgumentError naming the field, like the server's errors; it was protobuf's bare
    # "ValueError: Value out of range: -1". Nothing is sent, and the client carries on.
    for call, field in ((lambda: client.pose("default", -1), "pose.frame"),
                        (lambda: client.pose("default", 1, count="many"), "pose.count"),
                        (lambda: client.search("default", from_frame={"frame": -5}), "search.query"),
                        (lambda: client.create_characters("default", [{}], colour="red"), "create_characters.colour")):
        try:
            call()
            raise AssertionError(f"{field}: accepted")
        except errors.InvalidArgumentError as e:
            check(e.code == pb.ERROR_INVALID_ARGUMENT and e.message.startswith(field),
                  f"a value the proto cannot hold: {e.message}")
    # Frames without their database: the error says a frame needs one (it said only that a name is 1-63
    # characters, to a caller who had given no name at all).
    try:
        client.inertialize_transition(100, 800)
        raise AssertionError("frames without a database accepted")
    except errors.BadNameError as e:
        check(e.message.startswith("inertialize_transition.database is empty") and "frame" in e.message,
              f"frames without a database: {e.message}")
    # A spring with neither stiffness nor damping: the error names the fields (it said "spring_tune: invalid argument").
    try:
        client.spring_tune(to_constraint={"stiffness": 0.0, "damping": 0.0, "dt": 1.0 / 60.0})
        raise AssertionError("a spring with no force accepted")
    except errors.InvalidArgumentError as e:
        check(e.message.startswith("spring_tune.to_constraint") and "stiffness = 0" in e.message,
              f"a spring with no force: {e.message}")
    check(client.ping(b"still").payload == b"still", "the client carries on after refusing them")
    # An empty body, sent raw: the server answers ERROR_UNSUPPORTED under the request's id.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        body = pb.Request(id=20).SerializeToString()
        raw.sendall(animserver.codec.encode_varint(len(body)) + body)
        reader = animserver.codec.FrameReader()
        messages = []
        while not messages:
            messages = reader.feed(raw.recv(65536))
        try:
            animserver.codec.response_result(messages[0].response)
            raise AssertionError("empty request accepted")
        except errors.UnsupportedError as e:
            check(e.request_id == 20, "an empty request: UnsupportedError for its id")


def test_auth():
    with Server("--auth-token", "s3cret", "--admin-token", "adm1n") as server:
        anonymous = animserver.Client(server.host, server.port, hello=False)
        try:
            anonymous.ping()
            raise AssertionError("ping before hello accepted")
        except errors.NotPermittedError as e:
            check(True, f"a server with a token refuses requests before hello: {e.message}")
        anonymous.close()
        with animserver.Client(server.host, server.port, auth_token="s3cret") as client:
            check(client.ping(b"in").payload == b"in" and not client.server.admin, "the auth token lets a client in")
            try:
                client.load_database("x")
                raise AssertionError("load without the admin token")
            except errors.NotPermittedError:
                check(True, "load_database needs the admin token")


def test_history_and_params(client, db):
    """set_history, character_history and set_character_params: the candidates of a searched tick equal a
    search of its recorded query and settings; parameters show in character_state; bad spans and values
    raise the server's error class, naming the field."""
    me = client.create_characters("default").characters[0]
    on = client.set_history(me, 2.0, candidates=5)
    check(on.capacity == 120 and on.bytes > 0, f"set_history: {on.capacity} ticks, {on.bytes} bytes")
    client.set_inputs([animserver.stick(me, 0.2, 0.9)])
    time.sleep(0.8)
    span = client.character_history(me, last_seconds=0.5, queries=True, poses=True)
    check(len(span.groups) == len(db.features) and 20 <= len(span.ticks) <= 30,
          f"character_history: {len(span.ticks)} ticks, {len(span.groups)} feature groups")
    searched = [t for t in span.ticks if t.searched]
    check(searched and all(len(t.rotations) == 4 * len(db.bones) for t in span.ticks), "searched ticks and poses")
    t = searched[-1]
    found = client.search("default", features=list(t.query), k=len(t.candidates), transition_cost=t.transition_cost,
                          current_frame={"frame": t.current_frame} if t.current_frame >= 0 else None,
                          ignore_range_end=t.ignore_range_end, ignore_surrounding=t.ignore_surrounding)
    check([m.frame for m in found.matches] == [c.frame for c in t.candidates] and
          [m.cost for m in found.matches] == [c.cost for c in t.candidates],
          "a tick's candidates = a search of its query and settings")
    by_tick = client.character_history(me, from_tick=span.ticks[0].tick, to_tick=span.ticks[-1].tick)
    check([x.frame for x in by_tick.ticks] == [x.frame for x in span.ticks], "the same span by tick range")
    try:
        client.character_history(me, from_tick=1, to_tick=span.last_tick + 10**6)
        raise AssertionError("character_history: a span past what is held was accepted")
    except errors.OutOfRangeError as e:
        check("holds ticks" in str(e), f"a span out of range: {e}")
    applied = client.set_character_params(me, inertialize_halflife=0.25, forward_speed=2.0).params
    state = client.character_state(me)
    check(applied.inertialize_halflife == state.params.inertialize_halflife == state.inertialize_halflife and
          abs(state.params.inertialize_halflife - 0.25) < 1e-6 and abs(state.params.forward_speed - 2.0) < 1e-6,
          "set_character_params shows in character_state")
    try:
        client.set_character_params(me, {"back_speed": 1.0, "velocity_halflife": -1.0})
        raise AssertionError("set_character_params: a negative half-life was accepted")
    except errors.InvalidArgumentError as e:
        check("velocity_halflife" in str(e) and client.character_state(me).params.back_speed == 1.25,
              f"a bad parameter names its field, nothing applied: {e}")
    # The warps' flags have presence: one left out is kept, False turns the warp back on.
    off = client.set_character_params(me, no_play_rate=True).params
    kept = client.set_character_params(me, transition_cost=0.02).params
    on = client.set_character_params(me, no_play_rate=False).params
    check(off.no_play_rate and kept.no_play_rate and not on.no_play_rate and
          client.character_state(me).params.no_play_rate is False,
          "set_character_params: a warp flag left out is kept, False turns it on")
    client.set_history(me, 0.0)
    client.destroy_characters([me])


async def async_test(port, ids_expected):
    client = await animserver.AsyncClient.connect("127.0.0.1", port, client_name="python-asyncio")
    check(client.server.protocol_version == 1, "asyncio: hello on connect")
    results = await asyncio.gather(*[client.search("default", from_frame={"frame": f}) for f in range(0, 1000, 50)])
    check([r.best.frame for r in results] == list(range(0, 1000, 50)), "asyncio: 20 concurrent searches")
    try:
        await client.describe_database("nope")
        raise AssertionError("asyncio: no error")
    except errors.NotFoundError as e:
        check(e.code == pb.ERROR_NOT_FOUND, "asyncio: errors are the same exceptions")
    ids = (await client.create_characters("default",
                                          [{"x": 0.0, "z": float(i)} for i in range(ids_expected)])).characters
    await client.set_inputs([animserver.velocity(c, 0.0, 1.4, 0.0) for c in ids])
    frames = []
    async with await client.subscribe(ids, encoding="quantized") as stream:
        async for frame in stream:
            frames.append(frame)
            if len(frames) == 90:
                break
    check(all(f.positions.shape == (ids_expected, 22, 3) for f in frames), "asyncio: a stream as an async iterator")
    moved = frames[-1].positions[:, 0, 2] - frames[0].positions[:, 0, 2]
    check(bool((moved > 0.5).all()), f"asyncio: characters walking +z moved {moved.min():.2f}..{moved.max():.2f} m")
    physical = (await client.create_characters("default", [{"x": 5.0, "z": 0.0}], mode="physical")).characters[0]
    check((await client.push(physical, "Chest", impulse=(0.0, 0.0, 40.0))).tick > 0, "asyncio: push")
    check((await client.recover(physical)).tick > 0, "asyncio: recover")
    await client.set_body_modes(physical, reset=True)
    pose = await client.pose("default", 5, count=2)
    check(pose.local_rotations.shape == (2, 22, 4), "asyncio: poses as arrays")
    await client.set_history(ids[0], 1.0)
    await asyncio.sleep(0.2)
    span = await client.character_history(ids[0], last_seconds=0.1)
    changed = await client.set_character_params(ids[0], {"transition_cost": 0.02})
    check(len(span.ticks) >= 5 and abs(changed.params.transition_cost - 0.02) < 1e-6,
          "asyncio: character_history and set_character_params")
    await client.close()


NESTED = """idle { clip idle loop GO moving }
moving { machine loco STOP idle }
machine loco {
  walk { clip walk [0 1] loop FAST run }
  run { clip run [0 1] loop SLOW walk }
}
"""


def test_machines_graphs_fit(client):
    """The state-machine, motion-graph, pose-fitting and physics requests through the package."""
    dynamics = client.inverse_dynamics("default", 0, 30)
    check(dynamics.torques.shape == (30, len(dynamics.bones), 3), "inverse_dynamics: numpy torques per frame and bone")
    joints = client.pose("default", 0, 10, global_=True).global_positions
    names = list(client.skeleton("default").names)
    picked = [names.index(b) for b in ("Hips", "Head", "LeftFoot", "RightFoot")]
    fitted = client.marker_fit("default", ["Hips", "Head", "LeftFoot", "RightFoot"], np.asarray(joints)[:, picked])
    check(fitted.positions.shape == (10, len(fitted.bones), 3) and fitted.residuals.shape == (10, 4),
          "marker_fit: numpy poses and residuals per frame")
    check(not client.check_machine("broken", "stand { JUMP nowhere }\n").ok, "check_machine: a bad target reported")
    summary = client.load_machine("nested_py", NESTED).machine
    check([st.name for st in summary.states] == ["idle", "moving", "walk", "run"], "load_machine: the states")
    check(any(m.name == "nested_py" for m in client.list_machines().machines), "list_machines")
    ids = list(client.create_characters("default", [{"x": 0, "z": 0}], mode=1, machine="nested_py").characters)
    check(client.send_events([{"character": ids[0], "event": "GO"}]).tick > 0, "send_events answers its tick")
    try:
        client.set_params([{"character": ids[0], "name": "speed", "value": 1.0}])
        check(False, "set_params: an unknown parameter refused")
    except animserver.AnimError as e:
        check("speed" in str(e), "set_params: an unknown parameter refused, named")
    client.destroy_characters(ids)
    client.unload_machine("nested_py")
    client.build_graph("default", timeout=60)  # a sanitizer build on a busy machine: slower than the 5 s default
    for _ in range(600):
        graph = client.describe_graph("default").graph
        if graph.ready:
            break
        client.ping()
    check(graph.ready and graph.nodes > 0, "build_graph / describe_graph: a graph")
    walk = client.query_graph("default", [(0, 0), (0, 10)], seconds=20.0, settle=2.0)
    check(len(walk.steps) > 0 and walk.error_mean < 0.25,
          f"query_graph: a walk near the line ({walk.error_mean:.3f} m)")
    due = FOLLOW_START_S + 10.0 / (FOLLOW_MIN_PACE * DEFAULT_DB_EXPECTED_SPEED)
    check(walk.arc >= 10.0 - PATH_END_M - 1e-3 and walk.seconds <= due,
          f"query_graph: along the line to its end ({walk.arc:.2f} m in {walk.seconds:.2f} s, due {due:.1f} s)")
    # The core options on the wire: slide as the build resolved it (on for the procedural clips), and a
    # planner without the lag carried from plan to plan, which never starts a line behind it from the idle
    # node (the cost-to-go alone starts lines up to about 90 degrees off: docs/graph-start.md).
    check(graph.options.slide == pb.GRAPH_SLIDE_ON, "describe_graph: slide as resolved")
    behind = client.query_graph("default", [(0, 0), (0, -10)], seconds=20.0, options={"disable_memory": True})
    check(behind.arc < 1.0, f"query_graph: disable_memory carried ({behind.arc:.2f} m of a line behind, none expected)")
    gid = list(client.create_characters("default", [{"x": 0, "z": 0}], mode=2).characters)
    check(client.set_paths([{"character": gid[0], "points": [{"x": 0, "z": 0}, {"x": 0, "z": 5}]}]).tick > 0,
          "set_paths")
    client.destroy_characters(gid)
    source = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    aligned = client.align(source, source + [1, 2, 3])
    check(abs(aligned.translation.x - 1) < 1e-4 and aligned.rms < 1e-4, "align recovers a translation")
    trackers = [{"bone": "Head", "position": {"x": 0, "y": 1.6, "z": 0}},
                {"bone": "LeftHand", "position": {"x": -0.3, "y": 1.0, "z": 0.1}},
                {"bone": "RightHand", "position": {"x": 0.3, "y": 1.0, "z": 0.1}},
                {"bone": "Hips", "position": {"x": 0, "y": 0.95, "z": 0}}]
    fit = client.fit_pose("default", trackers)
    check(len(fit.residuals) == 4 and max(fit.residuals) < 0.1, "fit_pose: a pose near the trackers")
    tid = list(client.create_characters("default", [{"x": 0, "z": 0}], mode=3,
                                        tracker={"trackers": [{"bone": t["bone"]} for t in trackers]}).characters)
    items = [{"character": tid[0], "trackers": [{"position": t["position"]} for t in trackers]}]
    nxt = client.set_trackers(items).tick
    check(nxt > 0, "set_trackers")
    check(client.set_trackers(items, tick=nxt + 30).tick == nxt + 30, "set_trackers named for a tick ahead waits for it")
    client.destroy_characters(tid)


def test_physical(client):
    """A physical character (MODE_PHYSICAL): pushed at a named tick it reacts (its stream says powered) and
    recovers; body modes and recover taken; bad input refused naming the field."""
    pid = list(client.create_characters("default", [{"x": 0, "z": 0}], mode="physical").characters)[0]
    stream = client.subscribe([pid], encoding="quantized")
    first = stream.next(timeout=5)
    check(int(first.physics[0]) == pb.PHYSICS_KINEMATIC, "a physical character starts kinematic")
    at = client.push(pid, "Chest", impulse=(0.0, 0.0, 40.0), point=(0.0, 0.05, 0.0), tick=first.tick + 10).tick
    check(at == first.tick + 10, f"push: applies at the tick named ({at})")
    states = set()
    for frame in stream.frames(150, timeout=5):
        states.add(int(frame.physics[0]))
        if frame.tick == at:
            check(frame.pose(pid).physics == pb.PHYSICS_POWERED, "the push's tick: powered")
    check(pb.PHYSICS_POWERED in states and pb.PHYSICS_RECOVERING in states, f"pushed, then recovering: {states}")
    check(client.set_body_modes(pid, [{"bone": "LeftArm", "descendants": True, "mode": "limp", "duration": 0.3}],
                                root={"mode": "powered", "halflife": 0.03, "damping_ratio": 1, "max_force": 2000,
                                      "max_torque": 300}).tick > 0, "set_body_modes")
    check(client.recover(pid).tick > 0, "recover")
    state = client.character_state(pid)
    check(state.pushes == 1 and state.mode == pb.MODE_PHYSICAL, f"character_state: {state.pushes} push")
    for call, field in ((lambda: client.push(pid, "Chest", impulse=(float("nan"), 0, 0)), "push.impulse"),
                        (lambda: client.push(pid, "Tail", impulse=(1, 0, 0)), "push.bone"),
                        (lambda: client.push(pid, 1, force=(5e4, 0, 0), duration=0.1), "push.force"),
                        (lambda: client.set_body_modes(pid, [{"bone": "LeftArm", "strength": {"halflife": 99}}]),
                         "set_body_modes.parts[0].strength.halflife")):
        try:
            call()
            raise AssertionError(f"{field}: accepted")
        except errors.AnimError as e:
            check(e.message.startswith(field), e.message)
    stream.close()
    client.destroy_characters([pid])
    # A body of its own mass: the state says it; out of range or non-finite refused naming the field.
    heavy = list(client.create_characters("default", [{"x": 3, "z": 0}], mode="physical",
                                          physics={"total_mass": 110}).characters)[0]
    check(abs(client.character_state(heavy).physics_total_mass - 110) < 1e-6, "physics.total_mass: 110 kg")
    for mass in (500.0, float("nan")):
        try:
            client.create_characters("default", [{"x": 6, "z": 0}], mode="physical", physics={"total_mass": mass})
            raise AssertionError(f"total_mass {mass}: accepted")
        except errors.AnimError as e:
            check(e.message.startswith("create_characters.physics.total_mass"), e.message)
    client.destroy_characters([heavy])


def test_world_limit(client):
    """One limit on world coordinates (core/pose/world.h), as a Python client sees it: in Hello, refused past it
    naming the field, and characters on it streamed alike in both encodings and both decoders."""
    limit = client.server.limits.world_limit
    check(limit == 10000, f"Limits.world_limit: {limit} m")
    # The ahead bounds (set_trackers.tick, sets waiting, push.tick): test_fit_service.c and test_physical.c show
    # each is the one the server enforces.
    limits = client.server.limits
    ahead = (limits.max_trackers_ahead, limits.max_trackers_waiting, limits.max_push_ahead, limits.max_pushes_pending)
    check(ahead == (31, 32, 36000, 8),
          f"Limits.max_trackers_ahead, max_trackers_waiting, max_push_ahead, max_pushes_pending: {ahead}")
    try:
        client.create_characters("default", [{"x": 0.0, "z": 0.0}, {"x": 10001.0, "z": 0.0}])
        raise AssertionError("a placement past the world limit was accepted")
    except errors.InvalidArgumentError as e:
        check(e.message.startswith("create_characters.placements[1].x = 10001: outside the world"), e.message)
    corners = [{"x": sx * limit, "z": sz * limit} for sx in (-1, 1) for sz in (-1, 1)]
    ids = list(client.create_characters("default", corners).characters)
    exact = client.subscribe(ids, encoding="float")
    packed = client.subscribe(ids, encoding="quantized")
    a, b = same_ticks(exact, packed)
    placed = np.array([[c["x"], c["z"]] for c in corners])
    check(np.abs(a.positions[:, 0, [0, 2]] - placed).max() < 0.5, "float roots where they were placed")
    # Half a float32 spacing at 10 km besides half a step: both decoders' roots are floats again.
    bound = ROOT_POSITION_M + 0.5 * float(np.spacing(np.float32(limit)))
    worst("quantized root positions vs floats at the world limit (m)",
          np.abs(a.positions[:, :1] - b.positions[:, :1]).max(axis=-1), bound, ["root"])
    exact.close()
    packed.close()
    client.destroy_characters(ids)


def main():
    check(all(callable(getattr(animserver.Client, kind, None)) for kind in animserver.REQUEST_KINDS),
          f"a method for every request in the proto ({len(animserver.REQUEST_KINDS)})")
    data_dir = tempfile.mkdtemp(prefix="animserver-py-")
    server = Server("--data-dir", data_dir)
    try:
        client = Recording(server.host, server.port, client_name="python-interop")
        db = test_session_and_databases(client, data_dir)
        test_poses_and_search(client, db)
        test_inertialization(client)
        test_characters_and_streams(client, db)
        test_history_and_params(client, db)
        test_machines_graphs_fit(client)
        test_physical(client)
        test_errors(client, server.port)
        test_world_limit(client)
        asyncio.run(async_test(server.port, 5))
        test_auth()
        client.shutdown()
        check(server.proc.wait(timeout=10) == 0, "shutdown: the server drains and exits 0")
        missing = set(animserver.REQUEST_KINDS) - Recording.sent
        check(not missing, f"every request kind exercised ({len(Recording.sent & set(animserver.REQUEST_KINDS))})"
              f"{': missing ' if missing else ''}{', '.join(sorted(missing))}")
    finally:
        server.stop()
    print("python client: passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Python package as a library against the real server (issue 31): errors
importable from the package root, one class per ErrorCode; `async with
AsyncClient(host, port)` connecting; the skeleton helper (names, parents
array, forward kinematics = the server's global pose); stream frames whose
rows say their character (pose(id), rows(ids)) checked against where each
character was placed; enum arguments checked before sending, by short name
or value, with an error naming the field and nothing applied. Each check
failed before its fix (AttributeError, ClosedError 'not connected', no
skeleton, no pose/rows, protobuf's 'unknown enum label' or an undefined value
sent). Run by tests/run.sh."""
import asyncio
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import Server, animserver, check  # noqa: E402

pb = animserver.pb
FK_M = 1e-4  # forward kinematics in float32 against the server's global positions
PLACED_M = 0.5  # an idle character's root stays this near its placement over a few frames


def expect(error_class, call, what):
    """Runs ``call``; checks it raises ``error_class``; returns the error."""
    try:
        call()
    except error_class as e:
        return e
    raise AssertionError(f"{what}: no {error_class.__name__}")


def test_errors_at_root(client):
    e = expect(animserver.NotFoundError, lambda: client.describe_database("nope"), "describe_database('nope')")
    check(isinstance(e, animserver.AnimError) and e.code == pb.ERROR_NOT_FOUND and "nope" in e.message,
          f"except animserver.NotFoundError (the README's example): {e}")
    missing = [name for name, value in pb.ErrorCode.items()
               if value and animserver.errors.error_class(value) is animserver.AnimError]
    check(not missing, f"a class for every ErrorCode of the proto{': missing ' + ', '.join(missing) if missing else ''}")
    at_root = [cls.__name__ for cls in animserver.AnimError.__subclasses__()
               if getattr(animserver, cls.__name__, None) is not cls or cls.__name__ not in animserver.__all__]
    check(not at_root, f"each importable from the package root and in __all__{': not ' + str(at_root) if at_root else ''}")


def test_skeleton(client):
    db = client.describe_database("default")
    skeleton = client.skeleton("default")
    check(skeleton.names == tuple(b.name for b in db.bones) and skeleton.parents.dtype == np.int32 and
          skeleton.parents.tolist() == [b.parent for b in db.bones] and len(skeleton) == 22,
          f"skeleton: names and an int32 parents array as describe_database's bones ({skeleton})")
    check(not skeleton.parents.flags.writeable, "its parents array is read-only")
    foot = skeleton.contact_bones[0]
    i = skeleton.index(foot)
    check(skeleton.names[i] == foot and skeleton.parent(foot) == skeleton.names[skeleton.parents[i]] and
          skeleton.parent(skeleton.names[0]) is None and foot in skeleton.children(skeleton.parent(foot)),
          f"index, parent, children ({foot}: index {i}, parent {skeleton.parent(foot)})")
    check(skeleton.contact_indices.tolist() == [skeleton.index(n) for n in db.contact_bones],
          "contact_indices in contact-bit order")
    e = expect(animserver.NotFoundError, lambda: skeleton.index("Tail"), "a bone not in the skeleton")
    check("'Tail'" in e.message and "default" in e.message, f"an unknown bone named: {e.message}")
    frames = client.pose("default", 300, count=10, local=True, global_=True)
    gp, _ = skeleton.global_pose(frames.local_positions, frames.local_rotations)
    err = np.linalg.norm(gp - frames.global_positions, axis=-1)
    bone = skeleton.names[int(np.unravel_index(np.argmax(err), err.shape)[1])]
    check(float(err.max()) <= FK_M, f"skeleton.global_pose = the server's global positions "
          f"(worst {float(err.max()):.2e} m at {bone})")
    return skeleton


def test_stream_rows(client, skeleton):
    xs = [3.0 * i for i in range(6)]
    ids = list(client.create_characters("default", [{"x": x, "z": 0.0} for x in xs]).characters)
    placed = dict(zip(ids, xs))
    asked = ids[::-1]  # subscribed in another order than created
    with client.subscribe(asked, encoding="quantized") as stream:
        frame = stream.next()
        check(len(frame) == 6 and set(frame.characters.tolist()) == set(ids), "a frame of the six characters")
        worst = max(abs(float(frame.pose(c).positions[0, 0]) - placed[c]) for c in ids)
        check(worst < PLACED_M, f"frame.pose(id) is that character's row: each root within {worst:.3f} m of "
              "its own placement")
        rows = frame.rows(asked)
        check(np.array_equal(frame.characters[rows], np.array(asked, dtype=np.uint64)) and
              np.allclose(frame.positions[rows, 0, 0], [placed[c] for c in asked], atol=PLACED_M),
              "frame.rows(ids): the rows in the order asked (arrays indexed with it)")
        poses = list(frame)
        check([p.character for p in poses] == frame.characters.tolist() and
              all(p.positions.shape == (22, 3) and p.rotations.shape == (22, 4) for p in poses),
              "iterating a frame: a CharacterPose per row, naming its character, cut to its bones")
        check(ids[0] in frame and 10 ** 9 not in frame, "`id in frame`")
        e = expect(animserver.NotFoundError, lambda: frame.pose(10 ** 9), "a character not in the frame")
        check(str(10 ** 9) in e.message and f"tick {frame.tick}" in e.message, f"not in this frame: {e.message}")
        expect(animserver.NotFoundError, lambda: frame.rows([ids[0], 10 ** 9]), "rows with one missing")
        gp, _ = frame.global_pose(skeleton)
        check(gp.shape == (6, 22, 3) and np.array_equal(gp, frame.global_pose(skeleton.parents)[0]),
              "frame.global_pose(skeleton) = frame.global_pose(skeleton.parents)")
    client.destroy_characters(ids)


def test_enums(client):
    before = client.server_stats().characters
    for call, field, shown in (
            (lambda: client.subscribe(owned=True, encoding="quantised"), "subscribe.encoding", "float, quantized"),
            (lambda: client.subscribe(owned=True, encoding=7), "subscribe.encoding = 7", "float, quantized"),
            (lambda: client.create_characters("default", [{}], mode="flying"), "create_characters.mode",
             "motion_matching, machine, graph"),
            (lambda: client.create_characters("default", [{}], mode=9), "create_characters.mode = 9", "tracker"),
            (lambda: client.build_graph("default", {"slide": "sideways"}), "build_graph.options.slide",
             "auto, on, off"),
            (lambda: client.search("default", from_frame={"frame": 1}, method=17), "search.query.method = 17",
             "brute"),
            (lambda: client.align([[0, 0, 0]], [[1, 0, 0]], mode="affine"), "align.mode", "rigid, similarity, yaw")):
        e = expect(animserver.InvalidArgumentError, call, field)
        check(e.message.startswith(field) and shown in e.message, f"refused before sending: {e.message}")
    check(client.server_stats().characters == before, "nothing applied: no character created by the refused calls")
    ids = list(client.create_characters("default", [{}], mode="MOTION_MATCHING").characters)
    check(len(ids) == 1, "mode by its proto name, any case")
    with client.subscribe(ids, encoding=pb.ENCODING_QUANTIZED) as by_value:
        check(by_value.next().encoding == pb.ENCODING_QUANTIZED, "encoding by value")
    with client.subscribe(ids, encoding="QUANTIZED") as by_name:
        check(by_name.next().encoding == pb.ENCODING_QUANTIZED, "encoding by short name, any case")
    check(client.align([[0, 0, 0], [1, 0, 0]], [[0, 0, 1], [1, 0, 1]], mode="yaw").rms < 1e-4, "align mode 'yaw'")
    client.destroy_characters(ids)


async def test_async_with(port):
    async with animserver.AsyncClient("127.0.0.1", port, client_name="python-async-with") as client:
        check(client.connected and client.server is not None and client.server.protocol_version == 1,
              "async with AsyncClient(host, port): connected, hello answered")
        check((await client.ping(b"in")).payload == b"in", "... and requests answered")
        skeleton = await client.skeleton("default")
        check(isinstance(skeleton, animserver.Skeleton) and len(skeleton) == 22, "await client.skeleton()")
        ids = list((await client.create_characters("default", [{"x": 1.0}])).characters)
        async with await client.subscribe(ids) as stream:
            frame = await stream.next()
            check(frame is not None and frame.pose(ids[0]).character == ids[0], "asyncio: frame.pose(id)")
    check(not client.connected, "closed on leaving the block")
    unopened = animserver.AsyncClient("127.0.0.1", port)
    try:
        await unopened.ping()
        raise AssertionError("a request on a client never opened was sent")
    except animserver.ClosedError as e:
        check("async with" in e.message, f"a client never opened says how to open it: {e.message}")
    connected = await animserver.AsyncClient.connect("127.0.0.1", port)
    async with connected:  # already open: entering does not connect again
        check((await connected.ping(b"again")).payload == b"again", "async with on a connected client")


def main():
    with Server() as server:
        with animserver.Client(server.host, server.port, client_name="python-library") as client:
            test_errors_at_root(client)
            skeleton = test_skeleton(client)
            test_stream_rows(client, skeleton)
            test_enums(client)
        asyncio.run(test_async_with(server.port))
    print("python library: passed")


if __name__ == "__main__":
    main()

"""Type-checked, never run: what a user's code sees of the package's types.
tests/interop/test_python_types.py runs mypy --strict on it against the
installed package; each assert_type fails the check when a result's type
goes wrong (or becomes Any)."""
from typing import Any, Coroutine, List, assert_type

import numpy as np
import numpy.typing as npt

import animserver
from animserver import pb


def blocking(client: animserver.Client) -> None:
    assert_type(client.search("default", from_frame={"frame": 1}, k=3), animserver.SearchResult)
    assert_type(client.search("default").best.frame, int)
    assert_type(client.batch_search("default", [{"k": 1}]), List[animserver.SearchResult])
    assert_type(client.describe_database("default"), pb.DescribeDatabaseResponse)
    assert_type(client.describe_database("default").summary.frames, int)
    assert_type(client.create_characters("default", [{}]), pb.CreateCharactersResponse)
    assert_type(client.pose("default", 1, count=2), animserver.PoseFrames)
    assert_type(client.skeleton("default"), animserver.Skeleton)
    assert_type(client.skeleton("default").parents, npt.NDArray[np.int32])
    assert_type(client.skeleton("default").names, tuple[str, ...])
    stream = client.subscribe([1], encoding="quantized")
    assert_type(stream, animserver.Subscription)
    for frame in stream.frames(3):
        assert_type(frame, animserver.StreamFrame)
        assert_type(frame.positions, npt.NDArray[np.float32])
        assert_type(frame.pose(1), animserver.CharacterPose)
        assert_type(frame.pose(1).character, int)
        assert_type(frame.rows([1, 2]), npt.NDArray[np.intp])
        assert_type(frame.global_pose(client.skeleton("default"))[0], npt.NDArray[np.float32])
        for row in frame:
            assert_type(row, animserver.CharacterPose)
    assert_type(client.server, pb.HelloResponse | None)
    if client.server is not None:
        limits = client.server.limits
        assert_type(limits.max_trackers_ahead, int)
        assert_type(limits.max_trackers_waiting, int)
        assert_type(limits.max_push_ahead, int)
        assert_type(limits.max_pushes_pending, int)
    assert_type(client.set_history(1, 5.0, candidates=8).bytes, int)
    history = client.character_history(1, last_seconds=2.0, poses=True)
    assert_type(history, pb.CharacterHistoryResponse)
    assert_type(history.first_tick, int)
    assert_type(client.set_character_params(1, inertialize_halflife=0.2).params, pb.ControllerParams)
    region = client.subscribe_region(30.0, centre=(0.0, 5.0), bands=[(10.0, 1), animserver.Band(30.0, 4)],
                                     max_characters=50)
    assert_type(region, animserver.Subscription)
    boxed = client.subscribe_region(box=(10.0, 4.0), follow=7, encoding="quantized")
    for frame in boxed.frames(3):
        for came in frame.entered:
            assert_type(came, animserver.CharacterEntered)
            assert_type(came.database, str)
            assert_type(came.database_version, int)
            assert_type(came.bones, int)
        assert_type(frame.left, tuple[int, ...])


async def asynchronous(client: animserver.AsyncClient) -> None:
    unawaited = client.search("default")
    assert_type(unawaited, Coroutine[Any, Any, animserver.SearchResult]).close()
    assert_type(await client.search("default"), animserver.SearchResult)
    assert_type(await client.ping(b"x"), pb.PingResponse)
    assert_type(await client.character_history(1, from_tick=10, to_tick=20), pb.CharacterHistoryResponse)
    assert_type(await client.skeleton(), animserver.Skeleton)
    async with animserver.AsyncClient("127.0.0.1", 7878) as opened:
        assert_type(opened, animserver.AsyncClient)
    stream = await client.subscribe([1])
    assert_type(stream, animserver.AsyncSubscription)
    async for frame in stream:
        assert_type(frame, animserver.StreamFrame)
    near = await client.subscribe_region(5.0, follow=1)
    assert_type(near, animserver.AsyncSubscription)


def errors(client: animserver.Client) -> None:
    try:
        client.describe_database("nope")
    except animserver.NotFoundError as e:
        assert_type(e, animserver.NotFoundError)
        assert_type(e.message, str)
        assert_type(e.code, int)

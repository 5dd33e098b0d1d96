"""The asyncio client: the same requests as :class:`animserver.Client`, each a
coroutine; pose streams as async iterators; reconnection driven by the loop.

    import asyncio, animserver

    async def main():
        async with animserver.AsyncClient("127.0.0.1", 7878) as client:   # connects, says hello
            ids = (await client.create_characters("default", [{"x": 0, "z": 0}])).characters
            await client.set_inputs([animserver.stick(ids[0], 0.0, 0.8)])
            async with await client.subscribe(ids) as stream:
                async for frame in stream:
                    print(frame.tick, frame.pose(ids[0]).positions[0])  # its root, world space

    asyncio.run(main())

``await AsyncClient.connect(host, port)`` does the same as ``async with``
without the block (then ``await client.close()``). Requests are written at
once and may be in flight together (``asyncio.gather``); one task reads and
hands each response to its waiter and each stream frame to its subscription
(at most ``queue_frames`` kept, the oldest dropped and counted in
``client_dropped``). With a
:class:`~animserver.reconnect.Reconnect` policy a lost connection is retried
in the background with the C library's backoff; ``on_connection`` (a function
or coroutine function) is told of each event; calls made meanwhile wait up to
their timeout for the connection.
"""
from __future__ import annotations

import asyncio
import inspect
import socket
from typing import Any, AsyncIterator, Awaitable, Callable, Deque, Dict, Iterable, Optional, Sequence, Tuple, TypeVar, Union

from . import errors
from ._call import Async, Call
from ._proto import pb
from ._settings import Settings
from ._streams import StreamQueue, StreamRouter
from .codec import DEFAULT_MAX_FRAME, FrameReader, encode_request, response_result
from .poses import StreamFrame
from .reconnect import ConnectionEvent, Reconnect
from .requests import BandLike, Encoding, Requests, region_fields, subscribe_fields

__all__ = ["AsyncClient", "AsyncSubscription"]

OnConnection = Callable[["AsyncClient", ConnectionEvent, Optional[errors.AnimError]], Union[None, Awaitable[None]]]
R = TypeVar("R")


class AsyncSubscription(StreamQueue):
    """A pose stream: ``async for frame in subscription``. Ends when
    unsubscribed; raises ClosedError when the connection is lost."""

    def __init__(self, client: "AsyncClient", response: pb.SubscribeResponse, rotations_only: bool,
                 queue: Deque[Any]) -> None:
        super().__init__(response, rotations_only, queue)
        self.client = client
        self._ready = asyncio.Event()
        if queue:
            self._ready.set()

    def _push(self, message: Any) -> None:
        super()._push(message)
        self._ready.set()

    def _end(self, lost: Optional[errors.AnimError]) -> None:
        self.closed = True
        self.lost = lost
        self._queue.clear()
        self._ready.set()

    async def next_message(self, timeout: Optional[float] = None) -> Optional[Any]:
        """The next raw ``pb.StreamMessage`` (None once unsubscribed)."""
        while not self._queue:
            if self.lost:
                raise self.lost
            if self.closed:
                return None
            self._ready.clear()
            try:
                await asyncio.wait_for(self._ready.wait(), self.client.timeout if timeout is None else timeout)
            except asyncio.TimeoutError:
                raise errors.TimedOutError(pb.ERROR_TIMED_OUT, "no stream frame in time") from None
        return self._queue.popleft()

    async def next(self, timeout: Optional[float] = None) -> Optional[StreamFrame]:
        """The next decoded frame (None once unsubscribed)."""
        return self._frame(await self.next_message(timeout))

    def __aiter__(self) -> AsyncIterator[StreamFrame]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[StreamFrame]:
        while True:
            frame = await self.next()
            if frame is None:
                return
            yield frame

    async def update(self, rate_divisor: int = 1, encoding: Encoding = "float",
                     paused: bool = False) -> pb.SubscriptionChangedResponse:
        """Changes rate, encoding, pause state."""
        return await self.client.update_subscription(self, rate_divisor, encoding, paused)

    async def close(self) -> None:
        """Unsubscribes (nothing to do after the connection was lost)."""
        if not self.closed and self.lost is None:
            await self.client.unsubscribe(self)
        self.closed = True

    async def __aenter__(self) -> "AsyncSubscription":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class AsyncClient(Requests, Async, Settings, StreamRouter[AsyncSubscription]):
    """An asyncio connection to an animserver: ``async with AsyncClient(host,
    port) as client`` (connects on entering, closes on leaving) or ``client =
    await AsyncClient.connect(host, port)``. Arguments as for
    :class:`animserver.Client`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 7878, *, auth_token: Optional[str] = None,
                 client_name: str = "animserver-python", timeout: float = 5.0, connect_timeout: float = 5.0,
                 hello: bool = True, reconnect: Optional[Reconnect] = None,
                 on_connection: Optional[OnConnection] = None, max_frame_bytes: int = DEFAULT_MAX_FRAME,
                 queue_frames: int = 256) -> None:
        self._settle(host, port, auth_token, client_name, timeout, connect_timeout, hello, reconnect, max_frame_bytes,
                     queue_frames)
        self._on_connection = on_connection
        self._pending: Dict[int, "asyncio.Future[Any]"] = {}
        self._kinds: Dict[int, str] = {}
        self._subs: Dict[int, AsyncSubscription] = {}
        self._writer: Optional[asyncio.StreamWriter] = None
        self._read_task: Optional["asyncio.Task[None]"] = None
        self._reconnect_task: Optional["asyncio.Task[None]"] = None
        self._connected = asyncio.Event()
        self._opened = False  # connected once: `async with` on a connected client does not connect again

    @classmethod
    async def connect(cls, host: str = "127.0.0.1", port: int = 7878, **options: Any) -> "AsyncClient":
        """Connects (not retried) and, unless ``hello=False``, says hello."""
        client = cls(host, port, **options)
        await client.open()
        return client

    async def open(self) -> None:
        """Connects (not retried) and, unless ``hello=False``, says hello: what
        ``connect`` and ``async with`` do. Nothing to do when already opened."""
        if self._opened:
            return
        await self._open()
        self._opened = True
        if self._say_hello:
            try:
                await self.hello()
            except BaseException:
                await self.close()
                raise

    async def _open(self) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(self.host, self.port),
                                                    self.connect_timeout)
        except asyncio.TimeoutError:
            raise errors.TimedOutError(pb.ERROR_TIMED_OUT, f"connecting to {self.host}:{self.port}") from None
        except OSError as e:
            raise errors.CannotConnectError(pb.ERROR_CANNOT_CONNECT, f"{self.host}:{self.port}: {e.strerror or e}") \
                from None
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._writer = writer
        self._state = "connected"
        self._proven = False
        self._connection_error = None
        self._connected.set()
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop(reader, FrameReader(
            self._max_frame_bytes)))

    @property
    def connected(self) -> bool:
        return self._state == "connected"

    async def close(self) -> None:
        """Closes the connection; pending requests fail with ClosedError."""
        self._state = "closed"
        self._connected.clear()
        for task in (self._reconnect_task, self._read_task):
            if task and task is not asyncio.current_task():
                task.cancel()
        if self._writer:
            self._writer.close()
            self._writer = None
        self._fail_all(errors.ClosedError(pb.ERROR_CLOSED, "client closed"))

    async def __aenter__(self) -> "AsyncClient":
        await self.open()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ---- reading -------------------------------------------------------------------
    async def _read_loop(self, reader: asyncio.StreamReader, frames: FrameReader) -> None:
        try:
            while True:
                data = await reader.read(1 << 18)
                if not data:
                    raise errors.ClosedError(pb.ERROR_CLOSED, "the server closed the connection")
                for message in frames.feed(data):
                    self._dispatch(message)
        except asyncio.CancelledError:
            raise
        except errors.AnimError as e:
            await self._lost(e)
        except OSError as e:
            await self._lost(errors.ClosedError(pb.ERROR_CLOSED, f"read: {e.strerror or e}"))

    def _dispatch(self, message: Any) -> None:
        if message.WhichOneof("kind") == "stream":
            self._route_stream(message.stream)
            return
        response = message.response
        failed = self._response_failed(response)
        future = self._pending.pop(response.id, None)
        kind = self._kinds.pop(response.id, None)
        if future is not None:
            if failed and kind == "hello":
                self._connection_error = errors.from_proto(response.error, response.id)
            if not future.done():
                future.set_result(response)
        elif response.id == 0 and failed:
            self._connection_error = errors.from_proto(response.error, 0)

    def _fail_all(self, error: errors.AnimError) -> None:
        pending, self._pending = self._pending, {}
        self._kinds.clear()
        for future in pending.values():
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: nobody may be waiting any more
        subs, self._subs = self._subs, {}
        for sub in subs.values():
            sub._end(error)
        self._early.clear()

    async def _event(self, event: ConnectionEvent, error: Optional[errors.AnimError]) -> None:
        if self._on_connection:
            result = self._on_connection(self, event, error)
            if inspect.isawaitable(result):
                await result

    async def _lost(self, error: errors.AnimError) -> None:
        if self._writer:
            self._writer.close()
            self._writer = None
        self._connected.clear()
        if self._connection_error is not None:
            error = self._connection_error
        self._fail_all(error)
        if not self._backoff or self._state == "closed":
            self._state = "closed"
            return
        self._state = "waiting"
        await self._event(ConnectionEvent.LOST, error)
        if not self._proven and self._backoff.failed():
            self._state = "gave_up"
            await self._event(ConnectionEvent.GAVE_UP, error)
            return
        self._reconnect_task = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        assert self._backoff
        while self._state == "waiting":
            await asyncio.sleep(self._backoff.next_delay())
            try:
                await self._open()
            except errors.AnimError as e:
                await self._event(ConnectionEvent.ATTEMPT_FAILED, e)
                if self._backoff.failed():
                    self._state = "gave_up"
                    await self._event(ConnectionEvent.GAVE_UP, e)
                continue
            if self.auth_token or self._say_hello:
                hello = asyncio.get_running_loop().create_task(self.hello())  # goes out first, pipelined
                hello.add_done_callback(lambda t: t.cancelled() or t.exception())
                await asyncio.sleep(0)
            await self._event(ConnectionEvent.RESTORED, None)
            return

    # ---- requests ------------------------------------------------------------------
    async def _run(self, call: Call[R]) -> R:
        result: R = await self._call(call.kind, call.fields, call.timeout, call.convert)
        return result

    async def subscribe(self, characters: Iterable[int] = (), owned: bool = False, rate_divisor: int = 1,
                        encoding: Encoding = "float", global_positions: bool = False, rotations_only: bool = False,
                        *, timeout: Optional[float] = None) -> AsyncSubscription:
        """A pose stream of these characters and/or all the caller owns: an
        async iterable of :class:`~animserver.poses.StreamFrame` (each row says
        its character: ``frame.characters``, ``frame.pose(id)``, ``frame.rows(ids)``)."""
        fields = subscribe_fields(characters, owned, rate_divisor, encoding, global_positions, rotations_only)
        return await self._run(Call("subscribe", fields, timeout, lambda r: self._subscription(r, rotations_only)))

    async def subscribe_region(self, radius: Optional[float] = None, *, box: Optional[Tuple[float, float]] = None,
                               centre: Tuple[float, float] = (0.0, 0.0), follow: int = 0,
                               bands: Sequence[BandLike] = (), max_characters: int = 0, rate_divisor: int = 1,
                               encoding: Encoding = "float", global_positions: bool = False,
                               rotations_only: bool = False, timeout: Optional[float] = None) -> AsyncSubscription:
        """A pose stream of the characters inside a region of the ground plane,
        any connection's: a circle of ``radius`` metres or a ``box`` of
        half-extents ``(half_x, half_z)``, centred on ``centre`` ``(x, z)`` or
        on ``follow``, a character of this connection's (re-centred each
        tick). ``bands`` (nearest first, at most 8) set each member's rate by
        its distance from the centre; without them every member goes at
        ``rate_divisor`` (with them, leave it 1). ``max_characters``: only
        the nearest N (0: all inside). Frames come only when they carry
        something; ``frame.entered`` announces each arrival once (its pose is
        in that frame) and ``frame.left`` each departure (walked out, past the
        cap, or destroyed). A refused region raises the server's error, whose
        message names the field (``subscribe.region.bands[1].radius ...``)."""
        fields = subscribe_fields((), False, rate_divisor, encoding, global_positions, rotations_only)
        fields["region"] = region_fields(radius, box, centre, follow, bands, max_characters)
        return await self._run(Call("subscribe", fields, timeout, lambda r: self._subscription(r, rotations_only)))

    async def _call(self, kind: str, fields: Any, timeout: Optional[float] = None,
                    convert: Optional[Callable[[Any], Any]] = None) -> Any:
        timeout = self.timeout if timeout is None else timeout
        if self._state != "connected":
            if self._state == "waiting":
                try:
                    await asyncio.wait_for(self._connected.wait(), timeout)
                except asyncio.TimeoutError:
                    pass
            if self._state != "connected" or self._writer is None:
                raise errors.ClosedError(pb.ERROR_CLOSED, "not connected" if self._opened else
                                         "not connected: use `async with AsyncClient(...)` or "
                                         "`await AsyncClient.connect(...)`")
        request_id = next(self._ids)
        frame = encode_request(request_id, kind, fields)  # first: a refused field leaves nothing pending
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._kinds[request_id] = kind
        assert self._writer is not None
        self._writer.write(frame)
        if self._writer.transport.get_write_buffer_size() > (1 << 20):
            await self._writer.drain()
        try:
            response = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            self._pending.pop(request_id, None)
            self._kinds.pop(request_id, None)
            raise errors.TimedOutError(pb.ERROR_TIMED_OUT, f"{kind}: no answer in time") from None
        body = response_result(response)
        return convert(body) if convert else body

    def _subscription(self, response: pb.SubscribeResponse, rotations_only: bool) -> AsyncSubscription:
        sub = AsyncSubscription(self, response, rotations_only, self._queue_for(response.subscription))
        self._subs[sub.id] = sub
        return sub

    def _unsubscribed(self, response: pb.SubscriptionChangedResponse) -> pb.SubscriptionChangedResponse:
        sub = self._subs.pop(response.subscription, None)
        if sub:
            sub._end(None)
        return response


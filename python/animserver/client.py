"""The blocking client: one socket, pipelined requests matched by id, pose
streams as iterators, optional reconnection.

    from animserver import Client
    with Client("127.0.0.1", 7878) as client:          # connects and says hello
        print(client.ping(b"hi").payload)
        frames = client.pose("default", 100, count=30)   # numpy arrays (30, bones, 3|4)

A call sends its request and reads until its response arrives (up to its
timeout); responses to other requests and stream frames that arrive meanwhile
are kept for their owners. ``send`` queues a request without waiting and
returns a :class:`Pending`; ``wait``/``Pending.result`` collect it: that is how
to pipeline. Frames of every subscription are read by any call; each
subscription keeps at most ``queue_frames`` (256) of them, dropping the oldest
(counted in ``Subscription.client_dropped``), as the C library does.

Not thread-safe: use a client from one thread (one client per thread).
Reconnection: see :mod:`animserver.reconnect`.
"""
from __future__ import annotations

import math
import select
import socket
import time
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, Optional, Sequence, Tuple, TypeVar

from . import errors
from ._call import Blocking, Call
from ._proto import pb
from ._settings import Settings
from ._streams import StreamQueue, StreamRouter
from .codec import DEFAULT_MAX_FRAME, FrameReader, encode_request, response_result
from .poses import StreamFrame
from .reconnect import ConnectionEvent, Reconnect
from .requests import BandLike, Encoding, Requests, region_fields, subscribe_fields

__all__ = ["Client", "Pending", "Subscription"]

OnConnection = Callable[["Client", ConnectionEvent, Optional[errors.AnimError]], None]
R = TypeVar("R")


class Pending:
    """A request sent and not yet collected."""
    __slots__ = ("client", "id", "kind", "convert", "value", "error", "done")

    def __init__(self, client: "Client", request_id: int, kind: str, convert: Optional[Callable[[Any], Any]]):
        self.client, self.id, self.kind, self.convert = client, request_id, kind, convert
        self.value: Any = None
        self.error: Optional[errors.AnimError] = None
        self.done = False

    def _settle(self, response: Any) -> None:
        try:
            body = response_result(response)
            self.value = self.convert(body) if self.convert else body
        except errors.AnimError as e:
            self.error = e
        self.done = True

    def _fail(self, error: errors.AnimError) -> None:
        self.error, self.done = error, True

    def result(self, timeout: Optional[float] = None) -> Any:
        """Waits for the response (``timeout`` seconds; None: the client's);
        returns the body or raises its AnimError."""
        return self.client.wait(self, timeout)


class Subscription(StreamQueue):
    """A pose stream: iterate it for :class:`~animserver.poses.StreamFrame`
    objects (each waiting up to the client's timeout). Ends when unsubscribed;
    raises ClosedError when the connection is lost."""

    def __init__(self, client: "Client", response: pb.SubscribeResponse, rotations_only: bool,
                 queue: Deque[Any]) -> None:
        super().__init__(response, rotations_only, queue)
        self.client = client

    def next_message(self, timeout: Optional[float] = None) -> Optional[Any]:
        """The next raw ``pb.StreamMessage`` (None once unsubscribed)."""
        deadline = self.client._deadline(timeout)
        while not self._queue:
            if self.lost:
                raise self.lost
            if self.closed:
                return None
            self.client._pump(deadline, lambda: bool(self._queue) or self.closed or self.lost is not None)
        return self._queue.popleft()

    def next(self, timeout: Optional[float] = None) -> Optional[StreamFrame]:
        """The next decoded frame (None once unsubscribed); TimedOutError after ``timeout``."""
        return self._frame(self.next_message(timeout))

    def __iter__(self) -> Iterator[StreamFrame]:
        while True:
            frame = self.next()
            if frame is None:
                return
            yield frame

    def frames(self, count: int, timeout: Optional[float] = None) -> Iterator[StreamFrame]:
        """At most ``count`` frames."""
        for _ in range(count):
            frame = self.next(timeout)
            if frame is None:
                return
            yield frame

    def update(self, rate_divisor: int = 1, encoding: Encoding = "float",
               paused: bool = False) -> pb.SubscriptionChangedResponse:
        """Changes rate, encoding, pause state."""
        return self.client.update_subscription(self, rate_divisor, encoding, paused)

    def close(self) -> None:
        """Unsubscribes (nothing to do after the connection was lost)."""
        if not self.closed and self.lost is None:
            self.client.unsubscribe(self)
        self.closed = True

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Client(Requests, Blocking, Settings, StreamRouter[Subscription]):
    """A blocking connection to an animserver.

    ``hello``: send a hello (carrying ``auth_token``) on connecting; its answer
    is in ``server`` (versions, capabilities, ``limits``). ``timeout``: the
    default seconds a call waits. ``reconnect``: a :class:`Reconnect` policy
    (None: off); ``on_connection(client, event, error)`` is told of losses,
    failed attempts, restorations and giving up."""

    def __init__(self, host: str = "127.0.0.1", port: int = 7878, *, auth_token: Optional[str] = None,
                 client_name: str = "animserver-python", timeout: float = 5.0, connect_timeout: float = 5.0,
                 hello: bool = True, reconnect: Optional[Reconnect] = None,
                 on_connection: Optional[OnConnection] = None, max_frame_bytes: int = DEFAULT_MAX_FRAME,
                 queue_frames: int = 256) -> None:
        self._settle(host, port, auth_token, client_name, timeout, connect_timeout, hello, reconnect, max_frame_bytes,
                     queue_frames)
        self._policy = reconnect
        self._on_connection = on_connection
        self._pending: Dict[int, Pending] = {}
        self._subs: Dict[int, Subscription] = {}
        self._out = bytearray()
        self._sock: Optional[socket.socket] = None
        self._due = 0.0
        self._open()  # the first connection is not retried
        if hello:
            self.hello()

    # ---- connection --------------------------------------------------------------
    def _open(self) -> None:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except socket.timeout:
            raise errors.TimedOutError(pb.ERROR_TIMED_OUT, f"connecting to {self.host}:{self.port}") from None
        except OSError as e:
            raise errors.CannotConnectError(pb.ERROR_CANNOT_CONNECT, f"{self.host}:{self.port}: {e.strerror or e}") \
                from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        self._sock = sock
        self._reader = FrameReader(self._max_frame_bytes)
        self._out.clear()
        self._state = "connected"
        self._proven = False
        self._connection_error = None

    @property
    def connected(self) -> bool:
        """True while connected (as far as the client knows)."""
        return self._state == "connected"

    def fileno(self) -> int:
        """The socket's descriptor (-1 while disconnected); changes after a reconnection."""
        return self._sock.fileno() if self._sock else -1

    def close(self) -> None:
        """Closes the connection; pending requests fail with ClosedError."""
        if self._sock:
            self._sock.close()
        self._sock = None
        self._state = "closed"
        self._fail_all(errors.ClosedError(pb.ERROR_CLOSED, "client closed"))

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _event(self, event: ConnectionEvent, error: Optional[errors.AnimError]) -> None:
        if self._on_connection:
            self._on_connection(self, event, error)

    def _fail_all(self, error: errors.AnimError) -> None:
        pending, self._pending = self._pending, {}
        for p in pending.values():
            p._fail(error)
        subs, self._subs = self._subs, {}
        for s in subs.values():
            s.lost = error
            s._queue.clear()
        self._early.clear()

    def _lost(self, error: errors.AnimError) -> None:
        """The connection broke: fail what was pending, drop streams, schedule reconnection."""
        if self._sock:
            self._sock.close()
        self._sock = None
        if self._connection_error is not None:
            error = self._connection_error  # the server said why before closing
        self._fail_all(error)
        if not self._backoff:
            self._state = "closed"
            return
        self._state = "waiting"
        self._event(ConnectionEvent.LOST, error)
        if not self._proven and self._backoff.failed():
            self._give_up(error)
            return
        self._due = time.monotonic() + self._backoff.next_delay()

    def _give_up(self, error: errors.AnimError) -> None:
        self._state = "gave_up"
        self._event(ConnectionEvent.GAVE_UP, error)

    def _try_reconnect(self) -> None:
        assert self._backoff is not None  # only a client with a policy waits to reconnect
        try:
            self._open()
        except errors.AnimError as e:
            self._event(ConnectionEvent.ATTEMPT_FAILED, e)
            if self._backoff.failed():
                self._give_up(e)
            else:
                self._due = time.monotonic() + self._backoff.next_delay()
            return
        if self.auth_token or self._say_hello:
            self.send("hello", {"protocol_version": 1, "client_name": self.client_name,
                                "auth_token": self.auth_token or ""}, self._hello_done)
        self._event(ConnectionEvent.RESTORED, None)

    def _ensure_connected(self, deadline: float) -> None:
        while self._state == "waiting":
            now = time.monotonic()
            if now >= self._due:
                self._try_reconnect()
                continue
            if now >= deadline:
                break
            time.sleep(min(self._due, deadline) - now)
        if self._state != "connected":
            raise errors.ClosedError(pb.ERROR_CLOSED, "not connected" if self._state != "gave_up"
                                     else "not connected: gave up reconnecting")

    # ---- requests -----------------------------------------------------------------
    def _deadline(self, timeout: Optional[float]) -> float:
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def send(self, kind: str, fields: Any = None, convert: Optional[Callable[[Any], Any]] = None) -> Pending:
        """Queues a request without waiting (it goes out at the next read or
        ``flush``); returns its Pending. ClosedError while disconnected."""
        if self._state != "connected":
            raise errors.ClosedError(pb.ERROR_CLOSED, "not connected")
        request_id = next(self._ids)
        self._out += encode_request(request_id, kind, fields)
        pending = Pending(self, request_id, kind, convert)
        self._pending[request_id] = pending
        return pending

    def wait(self, pending: Pending, timeout: Optional[float] = None) -> Any:
        """Reads until ``pending`` is answered; returns its result or raises."""
        if not pending.done:
            self._pump(self._deadline(timeout), lambda: pending.done)
        if pending.error:
            raise pending.error
        return pending.value

    def _run(self, call: Call[R]) -> R:
        result: R = self._call(call.kind, call.fields, call.timeout, call.convert)
        return result

    def subscribe(self, characters: Iterable[int] = (), owned: bool = False, rate_divisor: int = 1,
                  encoding: Encoding = "float", global_positions: bool = False, rotations_only: bool = False,
                  *, timeout: Optional[float] = None) -> Subscription:
        """A pose stream of these characters and/or all the caller owns: an
        iterable of :class:`~animserver.poses.StreamFrame` (each row says its
        character: ``frame.characters``, ``frame.pose(id)``, ``frame.rows(ids)``)."""
        fields = subscribe_fields(characters, owned, rate_divisor, encoding, global_positions, rotations_only)
        return self._run(Call("subscribe", fields, timeout, lambda r: self._subscription(r, rotations_only)))

    def subscribe_region(self, radius: Optional[float] = None, *, box: Optional[Tuple[float, float]] = None,
                         centre: Tuple[float, float] = (0.0, 0.0), follow: int = 0,
                         bands: Sequence[BandLike] = (), max_characters: int = 0, rate_divisor: int = 1,
                         encoding: Encoding = "float", global_positions: bool = False,
                         rotations_only: bool = False, timeout: Optional[float] = None) -> Subscription:
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
        return self._run(Call("subscribe", fields, timeout, lambda r: self._subscription(r, rotations_only)))

    def _call(self, kind: str, fields: Any, timeout: Optional[float] = None,
              convert: Optional[Callable[[Any], Any]] = None) -> Any:
        deadline = self._deadline(timeout)
        if self._state != "connected":
            self._ensure_connected(deadline)
        pending = self.send(kind, fields, convert)
        if not pending.done:
            self._pump(deadline, lambda: pending.done)
        if pending.error:
            raise pending.error
        return pending.value

    def _subscription(self, response: pb.SubscribeResponse, rotations_only: bool) -> Subscription:
        sub = Subscription(self, response, rotations_only, self._queue_for(response.subscription))
        self._subs[sub.id] = sub
        return sub

    def _unsubscribed(self, response: pb.SubscriptionChangedResponse) -> pb.SubscriptionChangedResponse:
        sub = self._subs.pop(response.subscription, None)
        if sub:
            sub.closed = True
            sub._queue.clear()
        return response

    def next_frame(self, timeout: Optional[float] = None) -> StreamFrame:
        """The oldest frame of any subscription (as ``anim_client_next_frame``)."""
        deadline = self._deadline(timeout)

        def ready() -> Optional[Subscription]:
            heads = [(int(s._queue[0].tick), s) for s in self._subs.values() if s._queue]
            return min(heads, key=lambda h: h[0])[1] if heads else None

        sub = ready()
        if sub is None:
            self._pump(deadline, lambda: ready() is not None)
            sub = ready()
        assert sub is not None
        return StreamFrame.from_message(sub._queue.popleft(), sub.rotations_only)

    # ---- I/O -----------------------------------------------------------------------
    def flush(self, timeout: Optional[float] = None) -> None:
        """Writes every queued request (reading meanwhile, so a full pipe cannot deadlock)."""
        if self._out:
            self._pump(self._deadline(timeout), lambda: not self._out)

    def poll(self, timeout: float = 0.0) -> None:
        """Does the I/O due within ``timeout`` seconds: sends, reads, dispatches
        responses and frames, reconnects when a reconnection is due."""
        deadline = time.monotonic() + timeout
        if self._state == "waiting":
            try:
                self._ensure_connected(deadline)
            except errors.ClosedError:
                return
        try:
            self._pump(deadline, lambda: False)
        except errors.TimedOutError:
            pass

    def _pump(self, deadline: float, done: Callable[[], bool]) -> None:
        """Sends and reads until ``done()`` or the deadline (TimedOutError) or
        a loss (ClosedError, after the loss is handled)."""
        while not done():
            sock = self._sock
            if sock is None:
                raise errors.ClosedError(pb.ERROR_CLOSED, "not connected")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.TimedOutError(pb.ERROR_TIMED_OUT, "no answer in time")
            writers = [sock] if self._out else []
            readable, writable, _ = select.select([sock], writers, [], min(remaining, 3600.0))
            if writable:
                try:
                    sent = sock.send(self._out)
                    del self._out[:sent]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError as e:
                    self._lost(errors.ClosedError(pb.ERROR_CLOSED, f"write: {e.strerror or e}"))
                    continue
            if readable:
                try:
                    data = sock.recv(1 << 18)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as e:
                    self._lost(errors.ClosedError(pb.ERROR_CLOSED, f"read: {e.strerror or e}"))
                    continue
                if not data:
                    self._lost(errors.ClosedError(pb.ERROR_CLOSED, "the server closed the connection"))
                    continue
                try:
                    messages = self._reader.feed(data)
                except errors.AnimError as e:
                    self._lost(e)
                    continue
                for message in messages:
                    self._dispatch(message)

    def _dispatch(self, message: Any) -> None:
        if message.WhichOneof("kind") == "stream":
            self._route_stream(message.stream)
            return
        response = message.response
        failed = self._response_failed(response)
        pending = self._pending.pop(response.id, None)
        if pending is not None:
            pending._settle(response)
            if failed and pending.kind == "hello":
                self._connection_error = pending.error  # a refused token: the server closes next
        elif response.id == 0 and failed:
            self._connection_error = errors.from_proto(response.error, 0)

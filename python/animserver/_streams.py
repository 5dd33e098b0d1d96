"""What the blocking client (``client.py``) and the asyncio client
(``aio.py``) share about pose streams: a subscription's queue of stream
messages, and the routing of each stream message to its subscription.

A subscription keeps at most ``queue_frames`` messages, dropping the oldest
(counted in ``client_dropped``), as the C library does. A stream message may
arrive before the SubscribeResponse that names its subscription (the server
streams from the next tick): it is kept in an early queue, which the
subscription takes over when it is made.
"""
from __future__ import annotations

import collections
from typing import Any, Deque, Dict, Generic, Optional, TypeVar

from . import errors
from ._proto import pb
from .poses import StreamFrame
from .reconnect import Backoff

__all__ = ["StreamQueue", "StreamRouter"]


class StreamQueue:
    """A subscription's state and its queue of raw ``pb.StreamMessage``."""

    def __init__(self, response: pb.SubscribeResponse, rotations_only: bool, queue: Deque[Any]) -> None:
        self.id: int = response.subscription
        self.tick_rate: float = response.tick_rate
        self.bones: int = response.bones
        self.rotations_only = rotations_only
        self.client_dropped = 0
        self.closed = False
        self.lost: Optional[errors.AnimError] = None
        self._queue = queue

    def _push(self, message: Any) -> None:
        if len(self._queue) == self._queue.maxlen:
            self.client_dropped += 1
        self._queue.append(message)

    def _frame(self, message: Optional[Any]) -> Optional[StreamFrame]:
        """message decoded (None for None: unsubscribed)."""
        return None if message is None else StreamFrame.from_message(message, self.rotations_only)


S = TypeVar("S", bound=StreamQueue)


class StreamRouter(Generic[S]):
    """A client's subscriptions (``_subs``) and early queues, and what it
    does with each message read: stream messages routed, a response noted."""
    _queue_frames: int
    _subs: Dict[int, S]
    _early: Dict[int, Deque[Any]]
    _proven: bool
    _backoff: Optional[Backoff]

    def _route_stream(self, stream: Any) -> None:
        sub = self._subs.get(stream.subscription_id)
        if sub is not None:
            sub._push(stream)
        else:
            self._early.setdefault(stream.subscription_id, collections.deque(maxlen=self._queue_frames)).append(stream)

    def _queue_for(self, subscription_id: int) -> Deque[Any]:
        """The queue a new subscription takes: its early one, or a new one."""
        early = self._early.pop(subscription_id, None)
        return early if early is not None else collections.deque(maxlen=self._queue_frames)

    def _response_failed(self, response: Any) -> bool:
        """Whether response is an error; the first success on a connection
        starts the reconnection attempts over."""
        failed: bool = response.error.code != 0
        if not failed and not self._proven:
            self._proven = True
            if self._backoff:
                self._backoff.answered()
        return failed

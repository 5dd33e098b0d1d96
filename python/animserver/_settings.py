"""What the blocking client (``client.py``) and the asyncio client
(``aio.py``) keep of the arguments they are made with (the same for both;
see :class:`animserver.Client`), and the state every connection starts from."""
from __future__ import annotations

import itertools
from typing import Any, Deque, Dict, Iterator, Optional

from . import errors
from ._proto import pb
from .reconnect import Backoff, Reconnect

__all__ = ["Settings"]


class Settings:
    host: str
    port: int
    auth_token: Optional[str]
    client_name: str
    timeout: float
    connect_timeout: float
    server: Optional[pb.HelloResponse]  # the last HelloResponse
    _say_hello: bool
    _backoff: Optional[Backoff]
    _max_frame_bytes: int
    _queue_frames: int
    _ids: Iterator[int]
    _early: Dict[int, Deque[Any]]
    _state: str
    _proven: bool
    _connection_error: Optional[errors.AnimError]

    def _settle(self, host: str, port: int, auth_token: Optional[str], client_name: str, timeout: float,
                connect_timeout: float, hello: bool, reconnect: Optional[Reconnect], max_frame_bytes: int,
                queue_frames: int) -> None:
        self.host, self.port = host, port
        self.auth_token = auth_token
        self.client_name = client_name
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.server = None
        self._say_hello = hello
        self._backoff = Backoff(reconnect) if reconnect else None
        self._max_frame_bytes = max_frame_bytes
        self._queue_frames = queue_frames
        self._ids = itertools.count(1)
        self._early = {}  # stream messages before their SubscribeResponse (_streams.py)
        self._state = "closed"
        self._proven = False
        self._connection_error = None

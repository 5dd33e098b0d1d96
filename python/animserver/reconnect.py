"""Reconnection, with the C library's semantics (include/anim_client.h).

Off by default: a lost connection stays lost. With a :class:`Reconnect`
policy, when the connection breaks:

- pending requests fail with the break's error (ClosedError, or the server's
  id-0 error that preceded the close), once;
- subscriptions and queued stream frames are dropped (iterating them raises
  ClosedError): the next server knows nothing of this connection's characters
  or subscriptions;
- ``on_connection(LOST, error)`` runs; the next call (blocking client) or the
  event loop (asyncio client) reconnects to the same address after a delay that
  doubles from ``initial`` to ``maximum`` seconds, each drawn uniformly from
  [delay / 2, delay] so clients of a lost server do not return in step. Each
  failed attempt calls ``on_connection(ATTEMPT_FAILED, error)``; a new
  connection lost before it answered any request (a server refusing the auth
  token) counts as a failed attempt too; the count starts over once a
  connection answers. After ``max_attempts`` failures (0: never),
  ``on_connection(GAVE_UP, error)`` and the client stays closed;
- once connected, a hello carrying the auth token goes out first (when one is
  set), then ``on_connection(RESTORED, None)``: re-create characters and
  subscriptions there with the ordinary API.

Meanwhile requests wait up to their timeout for the connection, then raise
ClosedError. The first connection is not retried.
"""
from __future__ import annotations

import enum
import random
from dataclasses import dataclass
from typing import Optional

__all__ = ["ConnectionEvent", "Reconnect", "Backoff"]


class ConnectionEvent(enum.IntEnum):
    """The C library's ANIM_CONNECTION_* values."""
    LOST = 1
    ATTEMPT_FAILED = 2
    RESTORED = 3
    GAVE_UP = 4


@dataclass
class Reconnect:
    """Reconnection policy: delays in seconds, ``max_attempts`` 0 for unlimited."""
    initial: float = 0.1
    maximum: float = 5.0
    max_attempts: int = 0


class Backoff:
    """The schedule of attempts after a loss (no I/O: the clients drive it).
    The delay before an attempt is ``initial x 2^failures`` capped at
    ``maximum``, drawn from [delay / 2, delay] (client/reconnect.c)."""

    def __init__(self, policy: Reconnect, rng: Optional[random.Random] = None) -> None:
        self.policy = policy
        self.rng = rng or random.Random()
        self.failures = 0

    def next_delay(self) -> float:
        """Seconds to wait before the next attempt."""
        initial = self.policy.initial if self.policy.initial > 0 else 0.1
        maximum = self.policy.maximum if self.policy.maximum > 0 else 5.0
        delay = min(initial * 2.0 ** min(self.failures, 60), maximum)
        return self.rng.uniform(delay / 2.0, delay)

    def failed(self) -> bool:
        """Counts a failed attempt; True when the policy gives up."""
        self.failures += 1
        return 0 < self.policy.max_attempts <= self.failures

    def answered(self) -> None:
        """A connection answered a request: the count starts over."""
        self.failures = 0

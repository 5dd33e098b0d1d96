#!/usr/bin/env python3
"""Reconnection of the Python package with the C library's semantics
(include/anim_client.h): the server is killed with SIGKILL under a live
client; pending requests and streams fail with ClosedError, once; on_connection
reports LOST, ATTEMPT_FAILED while nothing listens, RESTORED when a successor
listens on the same port, where the client re-creates its characters and
subscription with the ordinary API; frames then come from the new server;
the auth token is sent again first; GAVE_UP after max_attempts. Blocking and
asyncio clients. Run by tests/run.sh."""
import asyncio
import os
import random
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import Server, animserver, check, wait_until  # noqa: E402

Event = animserver.ConnectionEvent
ClosedError = animserver.errors.ClosedError
POLICY = animserver.Reconnect(initial=0.02, maximum=0.2, max_attempts=0)


def test_backoff_schedule():
    """The delays double from initial to maximum, each drawn from [d/2, d];
    failures count; an answer starts over (no clock involved)."""
    backoff = animserver.reconnect.Backoff(animserver.Reconnect(0.1, 1.0, 5), random.Random(7))
    bounds = []
    for _ in range(6):
        bounds.append(backoff.next_delay())
        if backoff.failed():
            break
    expected = [0.1, 0.2, 0.4, 0.8, 1.0]
    check(len(bounds) == 5 and all(d / 2 <= b <= d for b, d in zip(bounds, expected)),
          f"backoff delays {['%.3f' % b for b in bounds]} within [d/2, d] of {expected}; gives up after 5")
    backoff.answered()
    check(backoff.failures == 0 and backoff.next_delay() <= 0.1, "an answer starts the count over")


class Crowd:
    """What a client re-creates in RESTORED: three characters and a subscription."""

    def __init__(self):
        self.events, self.ids, self.sub = [], [], None

    def build(self, client):
        self.ids = client.create_characters("default", [{"x": float(i), "z": 0.0} for i in range(3)]).characters
        client.set_inputs([animserver.stick(c, 0.0, 0.7) for c in self.ids])
        self.sub = client.subscribe(owned=True, encoding="quantized")

    def on_connection(self, client, event, error):
        self.events.append((event, error.code if error else 0))
        if event == Event.RESTORED:
            self.build(client)


def test_blocking():
    server = Server("--auth-token", "tok")
    port = server.port
    crowd = Crowd()
    client = animserver.Client(server.host, port, auth_token="tok", reconnect=POLICY,
                               on_connection=crowd.on_connection)
    crowd.build(client)
    first = crowd.sub.next()
    old_ids, old_sub = list(crowd.ids), crowd.sub
    check(sorted(first.characters.tolist()) == sorted(old_ids), "frames of the first server's characters")
    os.kill(server.proc.pid, signal.SIGSTOP)  # it cannot answer what is sent now: the ping is surely pending
    pending = client.send("ping", {"payload": b"lost"})
    client.flush()
    server.kill()
    try:
        while True:
            old_sub.next()
    except ClosedError:
        check(True, "the stream raises ClosedError when the server dies")
    try:
        pending.result()
        raise AssertionError("a pending request survived the loss")
    except ClosedError:
        check(True, "the pending request failed with ClosedError")
    check(crowd.events[0] == (Event.LOST, animserver.pb.ERROR_CLOSED), f"on_connection(LOST, CLOSED) first")
    try:
        client.ping(timeout=0.3)
        raise AssertionError("a ping with no server")
    except ClosedError:
        failed = [e for e in crowd.events if e[0] == Event.ATTEMPT_FAILED]
        check(len(failed) >= 1 and all(code == animserver.pb.ERROR_CANNOT_CONNECT for _, code in failed),
              f"calls wait up to their timeout, then ClosedError; {len(failed)} failed attempts reported")
    successor = Server("--auth-token", "tok", port=port)
    try:
        check(client.ping(b"back", timeout=10).payload == b"back",
              "the next call reconnects to the successor (hello with the token first)")
        check(crowd.events[-1] == (Event.RESTORED, 0), "on_connection(RESTORED) once connected")
        check(client.server_stats().characters == 3 and crowd.sub is not old_sub,
              "RESTORED re-created the characters and the subscription on the new server")
        frame = client.next_frame()
        check(sorted(frame.characters.tolist()) == sorted(crowd.ids) and frame.subscription == crowd.sub.id,
              "frames come from the new server's characters")
        check(client.server.protocol_version == 1, "the reconnection's hello answered")
    finally:
        successor.kill()
    # Giving up: a policy of 3 attempts with nothing listening.
    crowd.events.clear()
    client._backoff = animserver.reconnect.Backoff(animserver.Reconnect(0.01, 0.05, 3))
    for attempt in range(2):  # the first call meets the loss, the second waits for a connection
        try:
            client.ping(timeout=5.0)
            raise AssertionError("a ping with no server")
        except ClosedError as e:
            message = e.message
    check("gave up" in message, f"after 3 failed attempts: {message}")
    kinds = [e for e, _ in crowd.events]
    check(kinds[0] == Event.LOST and kinds.count(Event.ATTEMPT_FAILED) == 3 and kinds[-1] == Event.GAVE_UP,
          f"events: {[k.name for k in kinds]}")
    try:
        client.ping(timeout=0.1)
        raise AssertionError("a client that gave up answered")
    except ClosedError:
        check(True, "a client that gave up stays closed")
    client.close()


def test_without_reconnect():
    server = Server()
    client = animserver.Client(server.host, server.port)
    server.kill()
    try:
        client.ping(timeout=2)
        raise AssertionError("ping on a dead server")
    except ClosedError:
        pass
    successor = Server(port=server.port)
    try:
        client.ping(timeout=0.2)
        raise AssertionError("reconnected without a policy")
    except ClosedError:
        check(True, "without a policy a lost connection stays lost")
    finally:
        successor.stop()


async def test_asyncio():
    server = Server()
    port = server.port
    events, state = [], {}
    restored = asyncio.Event()

    async def on_connection(client, event, error):
        events.append(event)
        if event == Event.RESTORED:
            state["ids"] = (await client.create_characters("default", [{"x": 0.0, "z": 0.0}])).characters
            state["sub"] = await client.subscribe(owned=True)
            restored.set()

    client = await animserver.AsyncClient.connect(server.host, port, reconnect=POLICY, on_connection=on_connection)
    ids = (await client.create_characters("default", [{"x": 0.0, "z": 0.0}])).characters
    sub = await client.subscribe(ids)
    await sub.next()
    server.kill()
    try:
        while True:
            await sub.next()
    except ClosedError:
        check(True, "asyncio: the stream raises ClosedError")
    check(events and events[0] == Event.LOST, "asyncio: LOST")
    successor = Server(port=port)
    try:
        await asyncio.wait_for(restored.wait(), 10)
        frame = await state["sub"].next()
        check(frame.characters.tolist() == state["ids"], "asyncio: RESTORED re-created a character; its frames arrive")
        check((await client.ping(b"a")).payload == b"a", "asyncio: requests work again")
    finally:
        await client.close()
        successor.stop()


def main():
    test_backoff_schedule()
    test_blocking()
    test_without_reconnect()
    asyncio.run(test_asyncio())
    print("python reconnect: passed")


if __name__ == "__main__":
    main()

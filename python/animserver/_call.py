"""One definition per request method, typed right for both clients.

A request method is written once (``requests.py``) as a function that builds a
:class:`Call`: the request's kind, its fields, the timeout and how to turn the
response body into the result. :class:`request` makes it a method of both
clients: the blocking client runs the call and returns ``R``, the asyncio
client returns a coroutine of ``R``. Type checkers see the same: the
descriptor's ``__get__`` is overloaded on the client's kind, with the
method's own parameters (``ParamSpec``), so ``await aclient.search(...)`` is
a :class:`~animserver.requests.SearchResult` and ``aclient.search(...)``
without ``await`` is a coroutine, not a result.
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Coroutine, Generic, Optional, Type, TypeVar, cast, overload

if sys.version_info >= (3, 10):
    from typing import Concatenate, ParamSpec
else:  # pragma: no cover (Python 3.9)
    from typing_extensions import Concatenate, ParamSpec

__all__ = ["Call", "request", "Blocking", "Async", "body_as"]

P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M")


class Call(Generic[R]):
    """A request to run: ``kind`` (its name in ``Request.body``), ``fields``,
    ``timeout`` (None: the client's) and ``convert`` (response body -> result)."""
    __slots__ = ("kind", "fields", "timeout", "convert")

    def __init__(self, kind: str, fields: Any, timeout: Optional[float], convert: Callable[[Any], R]) -> None:
        self.kind, self.fields, self.timeout, self.convert = kind, fields, timeout, convert


def _identity(body: Any) -> Any:
    return body


def body_as(cls: Type[M]) -> Callable[[Any], M]:
    """The conversion of a response whose result is its body message, typed
    as ``cls`` (the body is returned as it is)."""
    return cast(Callable[[Any], M], _identity)


class Blocking:
    """A client whose calls return their result."""

    def _run(self, call: Call[R]) -> R:
        raise NotImplementedError


class Async:
    """A client whose calls return a coroutine of their result."""

    async def _run(self, call: Call[R]) -> R:
        raise NotImplementedError


class request(Generic[P, R]):
    """Decorator: a :class:`Call` builder becomes a request method (see the
    module's comment). ``Client.ping`` (on the class) is the descriptor
    itself, callable as ``Client.ping(client, ...)``."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[R]]) -> None:
        self.build = build
        functools.update_wrapper(self, build)  # name and docstring for help()
        # What help() and inspect show: the result, not the Call (the
        # annotations are strings: every module has `from __future__ import annotations`).
        signature = inspect.signature(build)
        result = str(signature.return_annotation)
        result = result[len("Call["):-1] if result.startswith("Call[") else result
        self.__signature__ = signature.replace(return_annotation=result)
        bound = list(signature.parameters.values())[1:]
        self._blocking = signature.replace(parameters=bound, return_annotation=result)
        self._async = signature.replace(parameters=bound, return_annotation=f"Coroutine[Any, Any, {result}]")

    @overload
    def __get__(self, client: None, owner: Any) -> "request[P, R]": ...

    @overload
    def __get__(self, client: Async, owner: Any) -> Callable[P, Coroutine[Any, Any, R]]: ...

    @overload
    def __get__(self, client: Blocking, owner: Any) -> Callable[P, R]: ...

    def __get__(self, client: Any, owner: Any) -> Any:
        if client is None:
            return self
        build = self.build

        def method(*args: Any, **kwargs: Any) -> Any:
            return client._run(build(client, *args, **kwargs))
        method.__name__ = build.__name__
        method.__qualname__ = f"{type(client).__name__}.{build.__name__}"
        method.__doc__ = build.__doc__
        method.__signature__ = self._async if isinstance(client, Async) else self._blocking  # type: ignore[attr-defined]
        return method

    def __call__(self, client: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
        return client._run(self.build(client, *args, **kwargs))

"""Errors as exceptions carrying the server's code and message.

Every failure is an :class:`AnimError` with ``code`` (the proto's
``ErrorCode`` value, the negation of the C library's ``ANIM_E*``), ``name``
(``"ERROR_NOT_FOUND"``) and ``message`` (the server's, naming the offending
field). One subclass per code, named after it (``NotFoundError``,
``OutOfRangeError``, ``ClosedError``, ...), is made from the proto's enum, so a
code added to the proto gets its class without a change here:

    try:
        client.describe_database("nope")
    except animserver.errors.NotFoundError as e:
        print(e.code, e.message)

The client raises the client-side codes itself: ``ClosedError`` (connection
lost or not back yet), ``TimedOutError``, ``CannotConnectError``,
``ProtocolError`` (a frame that is not a ServerMessage).
"""
from __future__ import annotations

from typing import Dict, Type

from ._proto import pb

__all__ = ["AnimError", "error_class", "from_proto"]


class AnimError(Exception):
    """A request failed: ``code`` (ErrorCode value), ``name``, ``message``,
    ``request_id`` (0 for errors about the connection itself)."""

    code: int = 0

    def __init__(self, code: int, message: str = "", request_id: int = 0) -> None:
        self.code = int(code)
        self.message = message
        self.request_id = request_id
        super().__init__(f"{self.name}: {message}" if message else self.name)

    @property
    def name(self) -> str:
        try:
            return pb.ErrorCode.Name(self.code)
        except ValueError:
            return f"ERROR_{self.code}"


_CLASSES: Dict[int, Type[AnimError]] = {}


def _class_name(enum_name: str) -> str:
    words = enum_name[len("ERROR_"):].split("_")
    return "".join(w.capitalize() for w in words) + "Error"


for _name, _value in pb.ErrorCode.items():
    if _value == 0:
        continue
    _cls = type(_class_name(_name), (AnimError,), {"code": _value, "__doc__": f"The server's {_name}."})
    _cls.__module__ = __name__
    _CLASSES[_value] = _cls
    globals()[_cls.__name__] = _cls
    __all__.append(_cls.__name__)


def error_class(code: int) -> Type[AnimError]:
    """The exception class of an ErrorCode value (AnimError for unknown codes)."""
    return _CLASSES.get(int(code), AnimError)


def make(code: int, message: str = "", request_id: int = 0) -> AnimError:
    """An exception of the right class for ``code``."""
    return error_class(code)(code, message, request_id)


def from_proto(error: "pb.Error", request_id: int = 0) -> AnimError:
    """The exception for a Response.error."""
    return make(error.code, error.message, request_id)


# The names the client raises itself, spelled out for readers and type checkers.
ClosedError: Type[AnimError] = _CLASSES[pb.ERROR_CLOSED]
TimedOutError: Type[AnimError] = _CLASSES[pb.ERROR_TIMED_OUT]
CannotConnectError: Type[AnimError] = _CLASSES[pb.ERROR_CANNOT_CONNECT]
ProtocolError: Type[AnimError] = _CLASSES[pb.ERROR_PROTOCOL]
NotPermittedError: Type[AnimError] = _CLASSES[pb.ERROR_NOT_PERMITTED]
NotFoundError: Type[AnimError] = _CLASSES[pb.ERROR_NOT_FOUND]

"""Errors as exceptions carrying the server's code and message.

Every failure is an :class:`AnimError` with ``code`` (the proto's
``ErrorCode`` value, the negation of the C library's ``ANIM_E*``), ``name``
(``"ERROR_NOT_FOUND"``) and ``message`` (the server's, naming the offending
field). One subclass per code, named after it (``NotFoundError``,
``OutOfRangeError``, ``ClosedError``, ...), importable from the package root
or from here:

    try:
        client.describe_database("nope")
    except animserver.NotFoundError as e:
        print(e.code, e.message)

The classes are written out below (a type checker and a reader see them);
``tests/interop/test_python_library.py`` fails when the proto gains a code
without its class here. Until then a new code's errors are plain
:class:`AnimError` with the right ``code`` and ``name``.

The client raises the client-side codes itself: ``ClosedError`` (connection
lost or not back yet), ``TimedOutError``, ``CannotConnectError``,
``ProtocolError`` (a frame that is not a ServerMessage), and
``InvalidArgumentError`` for a value refused before sending (a field the proto
cannot hold, an enum name or value it does not define).
"""
from __future__ import annotations

from typing import Dict, Type

from ._proto import pb

__all__ = ["AnimError", "error_class", "from_proto", "make", "InvalidArgumentError", "OutOfMemoryError", "IoError", "MalformedError", "ChecksumError", "VersionError", "TruncatedError", "NotFoundError", "OutOfRangeError", "TimedOutError", "CannotConnectError", "ClosedError", "ProtocolError", "TooLargeError", "TryAgainError", "BusyError", "LimitError", "UnsupportedError", "NonFiniteError", "WrongDimensionError", "BadNameError", "ShuttingDownError", "InternalError", "ExistsError", "NotPermittedError"]


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
            return str(pb.ErrorCode.Name(self.code))
        except ValueError:
            return f"ERROR_{self.code}"


class InvalidArgumentError(AnimError):
    """ERROR_INVALID_ARGUMENT."""
    code: int = pb.ERROR_INVALID_ARGUMENT


class OutOfMemoryError(AnimError):
    """ERROR_OUT_OF_MEMORY."""
    code: int = pb.ERROR_OUT_OF_MEMORY


class IoError(AnimError):
    """ERROR_IO."""
    code: int = pb.ERROR_IO


class MalformedError(AnimError):
    """ERROR_MALFORMED."""
    code: int = pb.ERROR_MALFORMED


class ChecksumError(AnimError):
    """ERROR_CHECKSUM."""
    code: int = pb.ERROR_CHECKSUM


class VersionError(AnimError):
    """ERROR_VERSION."""
    code: int = pb.ERROR_VERSION


class TruncatedError(AnimError):
    """ERROR_TRUNCATED."""
    code: int = pb.ERROR_TRUNCATED


class NotFoundError(AnimError):
    """ERROR_NOT_FOUND."""
    code: int = pb.ERROR_NOT_FOUND


class OutOfRangeError(AnimError):
    """ERROR_OUT_OF_RANGE."""
    code: int = pb.ERROR_OUT_OF_RANGE


class TimedOutError(AnimError):
    """ERROR_TIMED_OUT."""
    code: int = pb.ERROR_TIMED_OUT


class CannotConnectError(AnimError):
    """ERROR_CANNOT_CONNECT."""
    code: int = pb.ERROR_CANNOT_CONNECT


class ClosedError(AnimError):
    """ERROR_CLOSED."""
    code: int = pb.ERROR_CLOSED


class ProtocolError(AnimError):
    """ERROR_PROTOCOL."""
    code: int = pb.ERROR_PROTOCOL


class TooLargeError(AnimError):
    """ERROR_TOO_LARGE."""
    code: int = pb.ERROR_TOO_LARGE


class TryAgainError(AnimError):
    """ERROR_TRY_AGAIN."""
    code: int = pb.ERROR_TRY_AGAIN


class BusyError(AnimError):
    """ERROR_BUSY."""
    code: int = pb.ERROR_BUSY


class LimitError(AnimError):
    """ERROR_LIMIT."""
    code: int = pb.ERROR_LIMIT


class UnsupportedError(AnimError):
    """ERROR_UNSUPPORTED."""
    code: int = pb.ERROR_UNSUPPORTED


class NonFiniteError(AnimError):
    """ERROR_NON_FINITE."""
    code: int = pb.ERROR_NON_FINITE


class WrongDimensionError(AnimError):
    """ERROR_WRONG_DIMENSION."""
    code: int = pb.ERROR_WRONG_DIMENSION


class BadNameError(AnimError):
    """ERROR_BAD_NAME."""
    code: int = pb.ERROR_BAD_NAME


class ShuttingDownError(AnimError):
    """ERROR_SHUTTING_DOWN."""
    code: int = pb.ERROR_SHUTTING_DOWN


class InternalError(AnimError):
    """ERROR_INTERNAL."""
    code: int = pb.ERROR_INTERNAL


class ExistsError(AnimError):
    """ERROR_EXISTS."""
    code: int = pb.ERROR_EXISTS


class NotPermittedError(AnimError):
    """ERROR_NOT_PERMITTED."""
    code: int = pb.ERROR_NOT_PERMITTED


_CLASSES: Dict[int, Type[AnimError]] = {cls.code: cls for cls in AnimError.__subclasses__()}


def error_class(code: int) -> Type[AnimError]:
    """The exception class of an ErrorCode value (AnimError for codes this
    package has no class for)."""
    return _CLASSES.get(int(code), AnimError)


def make(code: int, message: str = "", request_id: int = 0) -> AnimError:
    """An exception of the right class for ``code``."""
    return error_class(code)(code, message, request_id)


def from_proto(error: pb.Error, request_id: int = 0) -> AnimError:
    """The exception for a Response.error."""
    return make(error.code, error.message, request_id)

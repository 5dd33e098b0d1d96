"""The wire, without I/O: varint-delimited frames, requests by oneof name.

Every message is preceded by its length as a protobuf varint (docs/protocol.md,
"Framing"). Client to server: ``Request``; server to client:
``ServerMessage``. This module turns requests into bytes and bytes into
``ServerMessage`` objects; the blocking and asyncio clients share it and only
move the bytes.

The request kinds are read from the proto itself: ``REQUEST_KINDS`` maps every
field of ``Request.body`` (``"ping"``, ``"search"``, ...) to its message
class, so a request added to the proto can be sent by name
(``client.call("new_request", field=...)``) before it has a wrapper.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Union

from . import enums, errors
from ._proto import StreamView, pb

__all__ = ["REQUEST_KINDS", "RESPONSE_KINDS", "encode_varint", "encode_request", "FrameReader", "body_message"]

_BODY = pb.Request.DESCRIPTOR.oneofs_by_name["body"]
REQUEST_KINDS: Dict[str, Any] = {f.name: getattr(pb, f.message_type.name) for f in _BODY.fields}
"""Request oneof name -> request message class, in the proto's order."""
RESPONSE_KINDS: Dict[str, Any] = {f.name: getattr(pb, f.message_type.name)
                                   for f in pb.Response.DESCRIPTOR.oneofs_by_name["body"].fields}
"""Response oneof name -> response message class."""

DEFAULT_MAX_FRAME = 64 << 20
# A ServerMessage holding a stream frame starts with the tag of field `stream`
# (length-delimited): such frames are parsed with the stream view (packed
# floats as bytes, see _proto.StreamView), every other one as ServerMessage.
_STREAM_TAG = pb.ServerMessage.DESCRIPTOR.fields_by_name["stream"].number << 3 | 2  # as the C library: the largest response accepted

Fields = Union[None, Mapping[str, Any], Any]


def encode_varint(value: int) -> bytes:
    """The protobuf base-128 varint of a non-negative integer."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def body_message(kind: str, fields: Fields = None) -> Any:
    """The request message of ``kind`` from a message, a mapping of its fields
    (nested mappings and lists for sub-messages), or None (an empty one)."""
    cls = REQUEST_KINDS.get(kind)
    if cls is None:
        raise errors.make(pb.ERROR_UNSUPPORTED, f"no request named {kind!r} in {', '.join(REQUEST_KINDS)}")
    if fields is None:
        return cls()
    if isinstance(fields, cls):
        enums.check_message(kind, fields)
        return fields
    values = enums.check_fields(kind, cls.DESCRIPTOR, {k: v for k, v in fields.items() if v is not None})
    try:
        return cls(**values)
    except (ValueError, TypeError) as e:
        raise _field_error(kind, cls, values, e) from None


def _field_error(kind: str, cls: Any, values: Mapping[str, Any], error: Exception) -> errors.AnimError:
    """An InvalidArgumentError naming the field protobuf refused (a value its
    type cannot hold, an unknown name), as the server names fields; protobuf's
    own ValueError names none ("Value out of range: -1")."""
    for name, value in values.items():
        try:
            cls(**{name: value})
        except (ValueError, TypeError) as e:
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            return errors.make(pb.ERROR_INVALID_ARGUMENT, f"{kind}.{name} = {shown}: {e}")
    return errors.make(pb.ERROR_INVALID_ARGUMENT, f"{kind}: {error}")


def encode_request(request_id: int, kind: str, fields: Fields = None) -> bytes:
    """One framed Request: the varint length, then the message."""
    body: bytes = pb.Request(id=request_id, **{kind: body_message(kind, fields)}).SerializeToString()
    return encode_varint(len(body)) + body


class FrameReader:
    """Accumulates bytes and yields whole ServerMessages.

    ``feed`` raises ProtocolError on a malformed length varint, a frame over
    ``max_frame_bytes`` or bytes that are not a ServerMessage: the stream cannot
    be resynchronised after any of them, so the caller closes the connection."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()

    def feed(self, data: bytes) -> List[Any]:
        """Appends ``data``; returns the messages completed by it (maybe none)."""
        buffer = self._buffer
        buffer += data
        messages = []
        start, end = 0, len(buffer)
        while start < end:
            length, shift, pos = 0, 0, start
            while True:
                if pos >= end:
                    length = -1  # the varint itself is incomplete
                    break
                byte = buffer[pos]
                pos += 1
                length |= (byte & 0x7F) << shift
                if byte < 0x80:
                    break
                shift += 7
                if shift > 28:
                    raise errors.make(pb.ERROR_PROTOCOL, "malformed frame length")
            if length < 0:
                break
            if length > self.max_frame_bytes:
                raise errors.make(pb.ERROR_TOO_LARGE, f"frame of {length} bytes over {self.max_frame_bytes}")
            if pos + length > end:
                break
            message = StreamView() if length and buffer[pos] == _STREAM_TAG else pb.ServerMessage()
            try:
                message.ParseFromString(bytes(buffer[pos:pos + length]))
            except Exception as e:  # the runtime's DecodeError
                raise errors.make(pb.ERROR_PROTOCOL, f"not a ServerMessage: {e}") from None
            messages.append(message)
            start = pos + length
        if start:
            del buffer[:start]
        return messages

    def pending_bytes(self) -> int:
        """Bytes of an incomplete frame held."""
        return len(self._buffer)


def response_result(response: Any) -> Any:
    """The body of a Response, or raises its error as an AnimError."""
    if response.HasField("error") and response.error.code != 0:
        raise errors.from_proto(response.error, response.id)
    kind = response.WhichOneof("body")
    if kind is None:
        raise errors.make(pb.ERROR_PROTOCOL, f"response {response.id} has neither error nor body", response.id)
    return getattr(response, kind)


def iter_kinds() -> Iterator[str]:
    """Every request kind the proto defines."""
    return iter(REQUEST_KINDS)

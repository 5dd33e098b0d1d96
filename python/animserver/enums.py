"""Enum fields checked before sending, by name or by value, with a clear error.

protobuf itself accepts any integer for a proto3 enum field (an undefined
value goes out and the server guesses or refuses it with a message about the
wire, not about the argument) and refuses an unknown name with "unknown enum
label". Here every enum field of a request, at any depth, is checked against
the proto's enum before the request is encoded:

- a name: the proto's (``"ENCODING_QUANTIZED"``) or short, without the enum's
  common prefix, any case (``"quantized"``); ``create_characters(mode="graph")``,
  ``build_graph(options={"slide": "off"})``, ``subscribe(encoding="quantized")``;
- a number: one the enum defines;

anything else is an :class:`~animserver.errors.InvalidArgumentError` naming the
field and the accepted names: ``subscribe.encoding = 'quantised': no such
PoseEncoding (float, quantized)``. Nothing is sent.

Only the fields that can hold an enum are looked at: ``_enum_fields`` keeps
them per message type (an lru_cache over the proto's descriptors, which never
change), so a request without enums costs what it did before the check.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Dict, FrozenSet, List, Mapping, Union

import numpy as np
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from . import errors
from ._proto import pb

__all__ = ["enum_value", "short_names", "check_fields", "check_message"]

EnumLike = Union[str, int]


def _prefix(enum: EnumDescriptor) -> str:
    names = [v.name for v in enum.values]
    common = os.path.commonprefix(names)
    return str(common[:common.rfind("_") + 1])


def short_names(enum: EnumDescriptor) -> List[str]:
    """The enum's names without their common prefix, lower case, in value order."""
    prefix = _prefix(enum)
    return [v.name[len(prefix):].lower() for v in enum.values]


def enum_value(enum: EnumDescriptor, value: Any, field: str) -> int:
    """The number of ``value`` (a name, short or full, any case; or a defined
    number) in ``enum``; InvalidArgumentError naming ``field`` otherwise."""
    if isinstance(value, str):
        upper = value.upper()
        for candidate in (upper, _prefix(enum) + upper):
            found = enum.values_by_name.get(candidate)
            if found is not None:
                return int(found.number)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if int(value) in enum.values_by_number:
            return int(value)
    raise errors.InvalidArgumentError(pb.ERROR_INVALID_ARGUMENT, f"{field} = {value!r}: no such {enum.name} "
                                      f"({', '.join(short_names(enum))})")


@functools.lru_cache(maxsize=None)
def _enum_fields(descriptor: Descriptor) -> Dict[str, FieldDescriptor]:
    """The fields of a message type that hold an enum at some depth (enum
    fields, and message fields whose type has one), by name."""
    def walk(d: Descriptor, seen: FrozenSet[str]) -> bool:
        if d.full_name in seen:
            return False  # a recursive message: its enums are found where it started
        seen = seen | {d.full_name}
        return any(f.enum_type is not None or (_is_message(f) and walk(f.message_type, seen)) for f in d.fields)
    return {f.name: f for f in descriptor.fields
            if f.enum_type is not None or (_is_message(f) and walk(f.message_type, frozenset({descriptor.full_name})))}


def _is_message(f: FieldDescriptor) -> bool:
    return f.message_type is not None and not f.message_type.GetOptions().map_entry


def _each(f: FieldDescriptor, value: Any) -> Any:
    return value if f.label == FieldDescriptor.LABEL_REPEATED else [value]


def check_message(path: str, message: Message) -> None:
    """Checks the enum fields already set in a message (numbers only: a
    message cannot hold a name)."""
    fields = _enum_fields(message.DESCRIPTOR)
    if not fields:
        return
    for f, value in message.ListFields():
        if f.name not in fields:
            continue
        where = f"{path}.{f.name}"
        for v in _each(f, value):
            if f.enum_type is not None:
                enum_value(f.enum_type, v, where)
            else:
                check_message(where, v)


def _check_value(path: str, f: FieldDescriptor, value: Any) -> Any:
    if f.enum_type is not None:
        return enum_value(f.enum_type, value, path)
    if isinstance(value, Mapping):
        return check_fields(path, f.message_type, value)
    if isinstance(value, Message):
        check_message(path, value)
    return value


def check_fields(path: str, descriptor: Descriptor, values: Mapping[str, Any]) -> Dict[str, Any]:
    """``values`` (a message's fields as a mapping, nested mappings for
    sub-messages) with every enum field turned into its number, recursively;
    InvalidArgumentError naming the first field (``path.field``) that holds
    no value of its enum. Other fields, and fields the message does not have,
    are passed on as they are (the constructor checks them)."""
    out = dict(values)
    for name, f in _enum_fields(descriptor).items():
        value = out.get(name)
        if value is None:
            continue
        where = f"{path}.{name}"
        if f.label == FieldDescriptor.LABEL_REPEATED and not isinstance(value, (str, bytes, Mapping)):
            try:
                items = list(value)
            except TypeError:
                continue  # not a list: the constructor says so
            out[name] = [_check_value(f"{where}[{i}]", f, v) for i, v in enumerate(items)]
        else:
            out[name] = _check_value(where, f, value)
    return out

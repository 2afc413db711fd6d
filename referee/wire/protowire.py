"""The protobuf wire format's few primitives, for the encoders that write bytes directly.

A message on the wire is a concatenation of fields, each a tag (the field's number and
wire type, as a varint) followed by a varint or by a length and that many bytes. The
fast encoders (:mod:`referee.wire.fastcodec`) join such fields themselves; this module
gives them the pieces. Tags are never typed by hand: :func:`field_tag` reads them from
the generated descriptors of ``proto/nap/v1/nap.proto``, so a field renumbered there
(which the versioning rules forbid, but a mistake could do) cannot go out under its old
number. Callers compute their tags once, at import, into module constants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from google.protobuf.descriptor import FieldDescriptor

if TYPE_CHECKING:
    from google.protobuf.message import Message

__all__ = ["I32", "I64", "LEN", "VARINT", "field_tag", "length_delimited", "varint", "wire_type", "zigzag"]

VARINT: Final = 0
"""Wire type of integers, booleans and enums."""
I64: Final = 1
"""Wire type of fixed64, sfixed64 and double."""
LEN: Final = 2
"""Wire type of strings, bytes, messages and packed repeated scalars."""
I32: Final = 5
"""Wire type of fixed32, sfixed32 and float."""

_FIXED64: Final = frozenset(
    {FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64, FieldDescriptor.TYPE_DOUBLE}
)
_FIXED32: Final = frozenset(
    {FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_SFIXED32, FieldDescriptor.TYPE_FLOAT}
)
_DELIMITED: Final = frozenset(
    {FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES, FieldDescriptor.TYPE_MESSAGE}
)


def varint(value: int) -> bytes:
    """``value`` (not negative) as a protobuf base-128 varint."""
    if value < _SMALL:
        return _VARINTS[value]
    if value < _THREE_BYTES:  # request ids, once past the table: no loop
        return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80, value >> 14))
    return _slow_varint(value)


def _slow_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL: Final = 1 << 14
_THREE_BYTES: Final = 1 << 21
_VARINTS: Final = tuple(_slow_varint(value) for value in range(_SMALL))


def zigzag(value: int) -> int:
    """A ``sint32``/``sint64`` value as the unsigned number its varint carries."""
    return value << 1 if value >= 0 else (-value << 1) - 1


def length_delimited(tag: bytes, payload: bytes) -> bytes:
    """One length-delimited field: its tag bytes, the payload's length, the payload."""
    size = len(payload)
    return tag + (_VARINTS[size] if size < _SMALL else varint(size)) + payload


def wire_type(kind: int, *, packed: bool = False) -> int:
    """How a field's values travel: :data:`VARINT`, :data:`I64`, :data:`LEN` or :data:`I32`.

    ``kind`` is a ``FieldDescriptor.TYPE_*`` number; ``packed``: a packed repeated scalar
    (the proto3 default for repeated numbers, booleans and enums) travels as one
    length-delimited run of values. ValueError for a group, which proto3 has not.
    """
    if packed or kind in _DELIMITED:
        return LEN
    if kind in _FIXED64:
        return I64
    if kind in _FIXED32:
        return I32
    if kind == FieldDescriptor.TYPE_GROUP:
        msg = "a group field has no wire type in proto3"
        raise ValueError(msg)
    return VARINT


def field_tag(message: type[Message], name: str) -> bytes:
    """The tag protobuf writes before each value of field ``name`` of ``message`` (e.g. ``nap_pb2.SeatView``).

    Read from the message's descriptor (number and wire type), so it is what
    ``SerializeToString()`` writes; KeyError naming the message for a field it has not.
    Costs a descriptor lookup: compute it once, at import.
    """
    descriptor = message.DESCRIPTOR
    try:
        field = descriptor.fields_by_name[name]
    except KeyError:
        msg = f"{descriptor.full_name} has no field {name!r}"
        raise KeyError(msg) from None
    return varint(field.number << 3 | wire_type(field.type, packed=field.is_packed))

"""The JSON-lines form of a decision, both ways: pure functions, no IO (see docs/stdio-protocol.md).

A :class:`~referee.wire.nap_pb2.DecisionRequest` becomes one JSON object on one line,
with the same fields and names as the protobuf message (snake_case), every field always
present, phases as lower-case words and unset seats as ``null``. The view's object is read
from the message's own fields (its descriptor), so a field added to nap.v1 SeatView is in
the line with nothing to change here. A reply line becomes the action text to forward to
the referee: the reply is never corrected here, so whatever a bot says (garbage included)
reaches the referee, which records the fault.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from google.protobuf.descriptor import FieldDescriptor

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from referee.wire import nap_pb2

FORMAT_VERSION: Final = 1
"""The ``"version"`` member of every request line."""
MAX_FORWARDED_CHARS: Final = 120
"""A reply that is not an action is forwarded cut to this many characters."""


def _enum_prefix(name: str) -> str:
    """What every value of enum ``name`` starts with: ``"PHASE_"`` for Phase."""
    return "".join(f"_{c}" if c.isupper() else c.upper() for c in name).lstrip("_") + "_"


def _json(message: Message) -> dict[str, Any]:
    """Every field of ``message``, by its name, in field order: what the format's objects are made of.

    Messages as objects (``null`` for an unset one), repeated fields as lists, a field with
    presence ``null`` when unset, enums as lower-case words without their prefix (PHASE_PLAY
    is ``"play"``, a number unknown here ``"unspecified"``), the rest as they are.
    """
    found: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        name = field.name
        value = getattr(message, name)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.is_repeated:
                found[name] = [_json(item) for item in value]
            else:
                found[name] = _json(value) if message.HasField(name) else None
        elif field.is_repeated:
            found[name] = list(value)
        elif field.has_presence and not message.HasField(name):
            found[name] = None
        elif (enum := field.enum_type) is not None:
            known = enum.values_by_number.get(value)
            word = "unspecified" if known is None else known.name.removeprefix(_enum_prefix(enum.name))
            found[name] = word.lower()
        else:
            found[name] = value
    return found


def view_to_json(view: nap_pb2.SeatView) -> dict[str, Any]:
    """A SeatView as JSON-ready data: every field of the message, by its name (see :func:`_json`).

    ``exchanged`` always has one count per seat (the wire leaves it empty while all are 0).
    """
    found = _json(view)
    found["exchanged"] = found["exchanged"] or [0] * view.number_of_seats
    return found


def request_to_json(request: nap_pb2.DecisionRequest) -> dict[str, Any]:
    """A DecisionRequest as JSON-ready data (``deadline_ms`` as the bridge received it)."""
    return {
        "version": FORMAT_VERSION,
        "request_id": request.request_id,
        "table": request.table,
        "seat": request.seat,
        "deadline_ms": request.deadline_ms,
        "time_bank_ms": request.time_bank_ms,
        "view": view_to_json(request.view),
        "legal_actions": list(request.legal_actions),
    }


def encode_request(request: nap_pb2.DecisionRequest) -> bytes:
    """One request line: compact JSON, ASCII only, ending in a newline."""
    return json.dumps(request_to_json(request), separators=(",", ":")).encode("ascii") + b"\n"


def decode_reply(line: bytes, *, request_id: int) -> str:
    """The action text a reply line gives for request ``request_id``, to forward as it is.

    ``{"action": "QH"}`` (optionally with ``"request_id"``, which must then match) and
    ``"QH"`` (a JSON string) give their action; any other line is forwarded as its own
    text, cut to :data:`MAX_FORWARDED_CHARS`, so a bare ``QH`` or ``pass`` works and
    anything else is a malformed (or illegal) answer for the referee to record.
    """
    text = line.decode("utf-8", errors="replace").strip()
    if not text.startswith(("{", '"')):
        return _forwarded(text)
    try:
        value = json.loads(text)
    except ValueError:
        return _forwarded(text)
    if isinstance(value, str):
        return _forwarded(value)
    if not isinstance(value, dict) or not isinstance(value.get("action"), str):
        return _forwarded(text)
    echoed = value.get("request_id")
    if echoed is not None and str(echoed) != str(request_id):
        return _forwarded(f"<reply to request {echoed} instead of {request_id}: {text}>")
    action: str = value["action"]
    return _forwarded(action)


def _forwarded(text: str) -> str:
    if len(text) <= MAX_FORWARDED_CHARS:
        return text
    return text[: MAX_FORWARDED_CHARS - 3] + "..."

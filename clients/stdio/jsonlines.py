"""The JSON-lines form of a decision, both ways: pure functions, no IO (see docs/stdio-protocol.md).

A :class:`~referee.wire.nap_pb2.DecisionRequest` becomes one JSON object on one line,
with the same fields and names as the protobuf message (snake_case), every field always
present, phases as lower-case words and unset seats as ``null``. A reply line becomes the
action text to forward to the referee: the reply is never corrected here, so whatever a
bot says (garbage included) reaches the referee, which records the fault.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from referee.wire import nap_pb2

if TYPE_CHECKING:
    from collections.abc import Iterable

FORMAT_VERSION: Final = 1
"""The ``"version"`` member of every request line."""
MAX_FORWARDED_CHARS: Final = 120
"""A reply that is not an action is forwarded cut to this many characters."""

_PHASES: Final = {
    nap_pb2.PHASE_EXCHANGE: "exchange",
    nap_pb2.PHASE_BIDDING: "bidding",
    nap_pb2.PHASE_WIDOW: "widow",
    nap_pb2.PHASE_PLAY: "play",
    nap_pb2.PHASE_OVER: "over",
}


def _optional(message: Any, field: str) -> int | None:  # noqa: ANN401 - any message with the field
    return int(getattr(message, field)) if message.HasField(field) else None


def _cards(plays: Iterable[nap_pb2.PlayedCard]) -> list[dict[str, Any]]:
    return [{"seat": play.seat, "card": play.card} for play in plays]


def _trick(trick: nap_pb2.Trick) -> dict[str, Any]:
    return {"leader": trick.leader, "cards": _cards(trick.cards), "winner": _optional(trick, "winner")}


def view_to_json(view: nap_pb2.SeatView) -> dict[str, Any]:
    """A SeatView as JSON-ready data: every field, ``null`` for an unset seat, trick or widow_taken.

    ``exchanged`` always has one count per seat (the wire leaves it empty while all are 0).
    """
    return {
        "table": view.table,
        "seat": view.seat,
        "number_of_seats": view.number_of_seats,
        "profile": view.profile,
        "deal_number": view.deal_number,
        "deals_in_session": view.deals_in_session,
        "dealer": view.dealer,
        "phase": _PHASES.get(view.phase, "unspecified"),
        "to_act": _optional(view, "to_act"),
        "hand": list(view.hand),
        "bids": [{"seat": bid.seat, "bid": bid.bid} for bid in view.bids],
        "declarer": _optional(view, "declarer"),
        "contract": view.contract,
        "trump": view.trump,
        "current_trick": _trick(view.current_trick) if view.HasField("current_trick") else None,
        "completed_tricks": [_trick(trick) for trick in view.completed_tricks],
        "tricks_won": list(view.tricks_won),
        "balances": list(view.balances),
        "active": list(view.active),
        "pool": view.pool,
        "exchanged": list(view.exchanged) or [0] * view.number_of_seats,
        "peeked": list(view.peeked),
        "widow": view.widow,
        "drawn": list(view.drawn),
        "discarded": list(view.discarded),
        "widow_taken": view.widow_taken if view.HasField("widow_taken") else None,
    }


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

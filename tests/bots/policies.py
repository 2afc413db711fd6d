"""Deterministic bot policies, shared by a raw gRPC bot process and in-process play.

Each policy answers a request from the request alone (its table, the seat's view and
the legal actions as the wire spells them): no random generator whose state would
depend on the order requests arrive in. So the same policy gives the same choices down
both paths, and the two paths' records and faults can be compared exactly.

- ``steady``: a legal action picked by a hash of where the table stands.
- ``illegal``: like steady, but about one decision in five a well-formed illegal action.
- ``garbage``: like steady, but about one decision in five text that is no action.
- ``dies``: like steady until its third deal, then its process exits instead of answering.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from referee.rules import BID_NAMES, CARDS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import SeatView

POLICIES = ("steady", "illegal", "garbage", "dies")


def choose(policy: str, table: str, view: SeatView, legal: Sequence[str]) -> str | None:
    """The answer's text, or None when the bot's process exits instead of answering."""
    key = zlib.crc32(
        f"{table}/{view.seat}/{view.deal_number}/{len(view.bids)}/"
        f"{len(view.tricks)}/{len(view.trick)}".encode()
    )
    if policy == "dies" and view.deal_number >= 2:
        return None
    if policy == "illegal" and key % 5 == 0:
        if legal[0] in BID_NAMES:
            return next(bid for bid in reversed(BID_NAMES) if bid not in legal)
        return next(card.text for card in CARDS if card.text not in legal)
    if policy == "garbage" and key % 5 == 0:
        return "xyzzy"
    return legal[key % len(legal)]

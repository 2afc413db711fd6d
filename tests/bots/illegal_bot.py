"""A bot that answers every request with a well-formed but illegal action.

While bidding it calls "blucher" when that is not legal (or "pass" when that is not
legal, never in practice); in play it plays a card not among the legal ones. With
``--garbage 1`` it answers text that is no action at all ("xyzzy") instead.
"""

from __future__ import annotations

import _raw

from referee.rules import BID_NAMES, CARDS


def illegal(legal: list[str]) -> str:
    if legal[0] in BID_NAMES:
        return next(bid for bid in reversed(BID_NAMES) if bid not in legal)
    return next(card.text for card in CARDS if card.text not in legal)


async def main() -> None:
    args = _raw.arguments(garbage=0)

    async def answer(stream: _raw.Stream, request: object) -> bool:
        action = "xyzzy" if args.garbage else illegal(list(request.legal_actions))  # type: ignore[attr-defined]
        await stream.answer([(request.request_id, action)])  # type: ignore[attr-defined]
        return True

    await _raw.serve(args, answer)


if __name__ == "__main__":
    _raw.run(main)

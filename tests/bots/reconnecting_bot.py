"""A bot that drops its connection mid-trick once, comes back after --away-ms, and plays on.

On coming back it must receive the request it left unanswered again, and answers it.
"""

from __future__ import annotations

import asyncio
import random

import _raw


async def main() -> None:
    args = _raw.arguments(away_ms=200)
    rng = random.Random(args.seed)
    state = {"left": False}

    async def answer(stream: _raw.Stream, request: object) -> bool:
        if not state["left"] and request.view.current_trick.cards:  # type: ignore[attr-defined]
            state["left"] = True
            return False  # close the stream without answering
        await stream.answer([(request.request_id, rng.choice(list(request.legal_actions)))])  # type: ignore[attr-defined]
        return True

    await _raw.serve(args, answer)
    await asyncio.sleep(args.away_ms / 1000)
    await _raw.serve(args, answer)


if __name__ == "__main__":
    _raw.run(main)

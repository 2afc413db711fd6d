"""A bot that plays randomly until a trick is half played, then its process dies."""

from __future__ import annotations

import os
import random

import _raw


async def main() -> None:
    args = _raw.arguments()
    rng = random.Random(args.seed)

    async def answer(stream: _raw.Stream, request: object) -> bool:
        view = request.view  # type: ignore[attr-defined]
        if view.current_trick.cards:
            os._exit(3)  # mid-trick, without a word
        await stream.answer([(request.request_id, rng.choice(list(request.legal_actions)))])  # type: ignore[attr-defined]
        return True

    await _raw.serve(args, answer)


if __name__ == "__main__":
    _raw.run(main)

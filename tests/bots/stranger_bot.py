"""A bot that answers a request that is not its own, then its own, for its first requests.

With ``--strangers N`` (default 2) the first N requests each draw one answer to an id the
referee never sent this bot (the request id plus a billion) before the right answer.
"""

from __future__ import annotations

import random

import _raw


async def main() -> None:
    args = _raw.arguments(strangers=2)
    rng = random.Random(args.seed)
    left = [args.strangers]

    async def answer(stream: _raw.Stream, request: object) -> bool:
        rid = request.request_id  # type: ignore[attr-defined]
        legal = list(request.legal_actions)  # type: ignore[attr-defined]
        if left[0] > 0:
            left[0] -= 1
            await stream.answer([(rid + 10**9, legal[0])])
        await stream.answer([(rid, rng.choice(legal))])
        return True

    await _raw.serve(args, answer)


if __name__ == "__main__":
    _raw.run(main)

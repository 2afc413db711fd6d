"""A well-behaved bot: answers every request with a uniformly random legal action.

Answers for one batch go back in one message. Options: --max-batch N, --events (opt in to
table events), --dump FILE (record every received message), --seed N.
"""

from __future__ import annotations

import random

import _raw


async def main() -> None:
    args = _raw.arguments()
    rng = random.Random(args.seed)
    stream = _raw.Stream(args)
    first = await stream.hello()
    if first is None or first.WhichOneof("kind") != "welcome":
        return
    while True:
        message = await stream.read()
        if message is None:
            break
        if message.WhichOneof("kind") == "batch" and message.batch.requests:
            await stream.answer([(r.request_id, rng.choice(r.legal_actions)) for r in message.batch.requests])
    await stream.close()


if __name__ == "__main__":
    _raw.run(main)

"""A raw gRPC bot that answers by one of the deterministic policies of tests/bots/policies.py.

``--policy steady|illegal|garbage|dies``; with ``dies`` the process exits (status 3)
where the policy says so, without a word.
"""

from __future__ import annotations

import os

import _raw
from policies import choose

from referee.wire.codec import view_from_proto


async def main() -> None:
    args = _raw.arguments(policy="steady")

    async def answer(stream: _raw.Stream, request: object) -> bool:
        legal = list(request.legal_actions)  # type: ignore[attr-defined]
        text = choose(args.policy, request.table, view_from_proto(request), legal)  # type: ignore[attr-defined, arg-type]
        if text is None:
            os._exit(3)
        await stream.answer([(request.request_id, text)])  # type: ignore[attr-defined]
        return True

    await _raw.serve(args, answer)


if __name__ == "__main__":
    _raw.run(main)

"""Shared plumbing of the stdio test bots: read request lines, write one reply line each."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


def serve(reply: Callable[[int, dict[str, Any]], str | None]) -> None:
    """Call ``reply(n, request)`` for the n-th request (from 0); write its line unless None."""
    for number, line in enumerate(sys.stdin):
        request = json.loads(line)
        answer = reply(number, request)
        if answer is not None:
            sys.stdout.write(answer + "\n")
            sys.stdout.flush()


def lowest(request: dict[str, Any]) -> str:
    """Pass if legal, else the first legal action (cards come sorted by suit, then rank)."""
    legal: list[str] = request["legal_actions"]
    return "pass" if "pass" in legal else legal[0]


def answer(action: str) -> str:
    """The JSON reply line for ``action``."""
    return json.dumps({"action": action})

"""A stdio bot that sleeps 0.5 s before every fourth answer (late under a 300 ms limit)."""

from __future__ import annotations

import time
from typing import Any

from _lines import answer, lowest, serve


def reply(number: int, request: dict[str, Any]) -> str:
    if number % 4 == 1:
        time.sleep(0.5)
    return answer(lowest(request))


serve(reply)

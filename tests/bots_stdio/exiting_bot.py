"""A stdio bot that answers five requests, then exits with status 3 (every time it is started)."""

from __future__ import annotations

import sys
from typing import Any

from _lines import lowest, serve


def reply(number: int, request: dict[str, Any]) -> str:
    if number == 5:
        sys.stderr.write("exiting on purpose\n")
        sys.exit(3)
    return lowest(request)  # a bare action string is a valid reply too


serve(reply)

"""How nap says a number of things, in the lines it prints and the files it writes: ``1 session``."""

from __future__ import annotations

__all__ = ["count"]


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``1 session``, ``3 sessions``, ``0 faults``; ``plural`` for a noun that does not just take an s."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"

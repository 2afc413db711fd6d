"""The errors a tournament's library raises for its user: each ``str()`` is one clear line."""

from __future__ import annotations

__all__ = ["RunnerError"]


class RunnerError(Exception):
    """A tournament cannot run (or go on) as asked; ``str()`` is one clear line."""

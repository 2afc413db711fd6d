"""A bounded cache of worked-out values: the owner of each of the wire layer's caches.

The encoders and decoders keep parts they would otherwise work out again at every
decision: the bytes of a time bank's milliseconds, of a session's balances, the seats in
play of an ``active`` list. Each such cache is one :class:`Memo`, made once at import
next to the function it serves, with the function that builds a value from its key and a
bound: keys that never come back (a time bank counts down, balances change every deal)
cannot grow a long-lived process without end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Memo"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class Memo(dict[_K, _V]):
    """``memo[key]`` is ``build(key)``, worked out once and kept; cleared whole when it holds ``limit``.

    A dict, so that a hit costs a dict lookup and nothing more: only a miss calls Python
    code (``__missing__``). Clearing it whole rather than one entry at a time keeps the
    hit free of any bookkeeping; each key is built again at most once after a clear.
    Values must be immutable (bytes, tuples): every caller shares them.
    """

    __slots__ = ("_build", "limit")

    def __init__(self, build: Callable[[_K], _V], *, limit: int) -> None:
        super().__init__()
        self._build = build
        self.limit = limit
        """Entries held at most: the next miss at this size clears the memo first."""

    def __missing__(self, key: _K) -> _V:
        if len(self) >= self.limit:
            self.clear()
        value = self[key] = self._build(key)
        return value

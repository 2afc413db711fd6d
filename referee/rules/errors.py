"""The one base of the errors the rules engine raises for what its user asked: :class:`RulesError`.

A :class:`RulesError` (a ValueError) says, in one precise line, what was asked that the
rules do not allow or the engine cannot read: a rules profile or house-rules file that
makes no valid rules (:class:`~referee.rules.profiles.ProfileError`), an action the rules
forbid here (:class:`~referee.rules.deal.IllegalActionError`), a record that is malformed
or does not replay (:class:`~referee.rules.record.RecordError`), text that names no card,
suit, bid or action, a table the rules do not seat. A program that shows errors to
people shows these as they are, in one line.

Any other ValueError of the engine is a caller's mistake in using the API (a seat that is
not at the table, a hand of the wrong size, a deck that is no pack): a bug to fix, so it
is not a RulesError, and it keeps its traceback.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["RulesError", "did_you_mean"]


class RulesError(ValueError):
    """What was asked of the rules engine that the rules do not allow, or that it cannot read."""


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """``"; did you mean heather?"`` when one of ``names`` is close to the misspelled ``word``, else ``""``.

    For the end of a one-line error about a name nobody has: the nearest names first (at
    most two), by :func:`difflib.get_close_matches`.
    """
    near = difflib.get_close_matches(word, list(names), n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(near)}?" if near else ""

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

__all__ = ["RulesError"]


class RulesError(ValueError):
    """What was asked of the rules engine that the rules do not allow, or that it cannot read."""

"""What an arena refuses a person, by kind: the web layer maps each kind to its HTTP status, in one place.

Every one is an :class:`~tournaments.errors.ArenaError` whose ``str()`` is one line meant
for the person who asked (never a path of the host's, never another person's data).
"""

from __future__ import annotations

from tournaments.errors import ArenaError

__all__ = [
    "ForbiddenError",
    "NameTakenError",
    "NotFoundError",
    "NotPublicError",
    "QuotaError",
    "RefusedError",
    "TooLargeError",
    "UnauthorizedError",
]


class RefusedError(ArenaError):
    """The request cannot be done as asked (a pack that is not one, a bad name): 400."""


class UnauthorizedError(ArenaError):
    """No token, a wrong one, or a revoked one: 401."""


class ForbiddenError(ArenaError):
    """The token is good but may not do this, or what is asked belongs to someone else: 403."""


class NotFoundError(ArenaError):
    """Nothing by that name or number: 404."""


class NotPublicError(NotFoundError):
    """It exists, but is not public yet (a session of a block still in play): 404, with why."""


class NameTakenError(ArenaError):
    """The name is someone else's already: 409."""


class TooLargeError(ArenaError):
    """The upload is over the arena's size limit: 413."""


class QuotaError(ArenaError):
    """The person made as many submissions as the arena allows in a day: 429."""

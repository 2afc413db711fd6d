"""Tokens: how a person proves who they are to an arena, and what each token lets them do.

A token is ``nap_`` and 43 URL-safe characters: 256 bits from the system's secure source,
shown once (when it is made) and stored as its SHA-256 digest only, so the database
alone does not let anyone in. With that much randomness a plain digest is enough (a slow
password hash protects guessable secrets; nobody guesses 2**256), and it is what a token
is looked up by. Each token has scopes: ``submit`` (submit bots, follow one's own
submissions, read one's own bots' logs) and ``admin`` (add people, revoke tokens, see
everything a person sees of their own). A revoked token is refused as a wrong one is.

:func:`caller_of` turns a request's credentials into the :class:`Caller` (or None): the
one place a token is checked.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tournaments.store.arena import ArenaStore

__all__ = ["ADMIN", "SUBMIT", "Caller", "caller_of", "check_name", "digest", "new_token"]

SUBMIT: Final = "submit"
ADMIN: Final = "admin"
_PREFIX: Final = "nap_"
_TOKEN: Final = re.compile(r"nap_[A-Za-z0-9_-]{43}")
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
"""A person's name: as a bot's (letters, digits, ``_`` and ``-``, up to 40), so it fits in a path."""


def new_token() -> str:
    """A fresh token: ``nap_`` and 256 random bits, URL-safe."""
    return _PREFIX + secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """What the database keeps of a token: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str) -> str:
    """``name`` if it can name a person; ValueError with the rule otherwise."""
    if not _NAME.fullmatch(name):
        msg = (
            f"{name!r} cannot name a person: use letters, digits, _ and - (up to 40, a letter or digit first)"
        )
        raise ValueError(msg)
    return name


@dataclass(frozen=True, slots=True)
class Caller:
    """Who made a request, as their token says, and what it lets them do."""

    name: str
    scopes: frozenset[str]

    @property
    def admin(self) -> bool:
        """Whether the token may add people and see what any owner sees."""
        return ADMIN in self.scopes

    def may_submit(self) -> bool:
        """Whether the token may submit bots."""
        return SUBMIT in self.scopes or self.admin

    def owns(self, owner: str | None) -> bool:
        """Whether what belongs to ``owner`` may be shown to this caller (its owner, or an admin)."""
        return self.admin or (owner is not None and owner == self.name)


def caller_of(store: ArenaStore, token: str | None) -> Caller | None:
    """The caller a token names, or None: no token, not a token, unknown, or revoked."""
    if token is None or not _TOKEN.fullmatch(token):
        return None
    row = store.token(digest(token))
    if row is None or row.revoked_at is not None:
        return None
    return Caller(name=row.person.name, scopes=row.scopes)

"""A stand-in for :mod:`tournaments.arena.packs` while it is written on its own branch (a37-packs).

Imported first by the arena's web tests: when the real module is there, it does nothing.
It gives what the arena's settings, admission and upload path import (``PackLimits``,
``PackError``, ``check_upload``: a gzip's first bytes; ``unpack``, which no test here
calls), no more. Remove it once the packs are merged.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from tournaments.errors import ArenaError

if TYPE_CHECKING:
    from collections.abc import Mapping


class PackError(ArenaError):
    """An upload refused as a bot pack."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PackLimits:
    """How large an upload may be (the only limit the web layer meets)."""

    upload_bytes: int = 16 << 20

    def to_json(self) -> dict[str, int]:
        """As the settings store it."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> PackLimits:
        """Read :meth:`to_json`'s data."""
        return cls(**{key: int(value) for key, value in (data or {}).items() if key == "upload_bytes"})


def check_upload(data: bytes, *, limits: PackLimits) -> None:
    """Refuse what is not gzip-compressed (or over the limit), as the real check does first."""
    if len(data) > limits.upload_bytes:
        msg = "pack refused: over the arena's limit"
        raise PackError(msg)
    if not data.startswith(b"\x1f\x8b"):
        msg = "not a bot pack: not gzip-compressed (make it with nap bot submit --arena)"
        raise PackError(msg)


def unpack(*args: object, **kwargs: object) -> None:
    """Not here: no test of the web layer admits a submission."""
    del args, kwargs
    msg = "the stand-in for tournaments.arena.packs unpacks nothing"
    raise NotImplementedError(msg)


if importlib.util.find_spec("tournaments.arena.packs") is None:
    _module = types.ModuleType("tournaments.arena.packs", __doc__)
    _module.PackError = PackError  # type: ignore[attr-defined]
    _module.PackLimits = PackLimits  # type: ignore[attr-defined]
    _module.check_upload = check_upload  # type: ignore[attr-defined]
    _module.unpack = unpack  # type: ignore[attr-defined]
    sys.modules["tournaments.arena.packs"] = _module

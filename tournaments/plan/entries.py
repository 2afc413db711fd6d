"""Bot entries: who plays in a tournament and how each is started (an argv and a folder).

A :class:`BotEntry` is a value, stored with the tournament's config; a
:class:`~tournaments.play.bots.BotProcess` runs one. The example bots (``random``,
``peel``, ``pimc``) are entries too, each with the in-process policy that plays the same
without a process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tournaments.errors import RunnerError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from clients.sdk.bot import Bot

__all__ = ["BUILTIN_BOTS", "BotEntry", "example_bot", "example_hash"]


@dataclass(frozen=True, slots=True)
class BotEntry:
    """One entrant: its name in the tournament and how to start its process.

    ``command`` is an argv (no shell), run in ``cwd`` (the runner's folder when None).
    ``content_hash`` identifies the bot's code, so the store can tell versions apart.
    ``in_process`` is the import path (``"package.module:Class"``) of a
    :class:`clients.sdk.Bot` subclass that plays the same policy without a process,
    for :func:`tournaments.play.blocks.play_block_in_process`; None when there is none.
    ``alias_of`` is the bot's own name when the entry enters it under another
    (``peel`` for ``peel-2=peel``): the store registers the bot, not the alias.
    """

    name: str
    version: str
    command: tuple[str, ...]
    cwd: Path | None = None
    content_hash: str = ""
    in_process: str | None = None
    alias_of: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON-ready data (kept in the tournament's stored config)."""
        return {
            "name": self.name,
            "version": self.version,
            "command": list(self.command),
            "cwd": None if self.cwd is None else str(self.cwd),
            "content_hash": self.content_hash,
            "in_process": self.in_process,
            **({} if self.alias_of is None else {"alias_of": self.alias_of}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BotEntry:
        """Read an entry written by :meth:`to_json`."""
        cwd = data.get("cwd")
        return cls(
            name=str(data["name"]),
            version=str(data["version"]),
            command=tuple(str(arg) for arg in data["command"]),
            cwd=None if cwd is None else Path(cwd),
            content_hash=str(data.get("content_hash", "")),
            in_process=data.get("in_process"),
            alias_of=data.get("alias_of"),
        )

    def renamed(self, name: str) -> BotEntry:
        """The same bot entered again under another name (e.g. ``peel-2``)."""
        return dataclasses.replace(self, name=name, alias_of=self.alias_of or self.name)

    def make_bot(self) -> Callable[[], Bot]:
        """A factory of the entry's in-process bot; RunnerError when it has none."""
        if self.in_process is None:
            msg = f"bot {self.name} has no in-process policy (only a command)"
            raise RunnerError(msg)
        module_name, _, attr = self.in_process.partition(":")
        try:
            module = __import__(module_name, fromlist=[attr])
            factory: Callable[[], Bot] = getattr(module, attr)
        except (ImportError, AttributeError) as exc:
            msg = f"bot {self.name}: cannot import {self.in_process}: {exc}"
            raise RunnerError(msg) from exc
        return factory


_EXAMPLES = {
    "random": ("clients.bots.random_bot", "RandomBot"),
    "peel": ("clients.bots.peel", "PeelBot"),
    "pimc": ("clients.bots.pimc", "PimcBot"),
}


def example_hash(in_process: str) -> str:
    """The content hash of the example bot whose in-process policy is ``in_process`` (``module:Class``)."""
    return _source_hash(in_process.partition(":")[0])


def _source_hash(module: str) -> str:
    """Hash of an example bot's code: its module file, or every .py file of its package."""
    root = Path(__file__).resolve().parents[2]
    base = root.joinpath(*module.split("."))
    files = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
    digest = hashlib.sha256(module.encode())
    for path in files:
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def example_bot(kind: str, *, name: str | None = None) -> BotEntry:
    """An entry for an example bot (``random``, ``peel`` or ``pimc``), optionally under another name.

    The command is ``sys.executable -m clients.bots.<module>``, so it runs in this
    interpreter's environment.
    """
    if kind not in _EXAMPLES:
        msg = f"no example bot {kind!r}; there are: {', '.join(sorted(_EXAMPLES))}"
        raise RunnerError(msg)
    module, cls = _EXAMPLES[kind]
    return BotEntry(
        name=name or kind,
        version="1.0",
        command=(sys.executable, "-m", module),
        cwd=None,
        content_hash=_source_hash(module),
        in_process=f"{module}:{cls}",
    )


BUILTIN_BOTS: Mapping[str, BotEntry] = {kind: example_bot(kind) for kind in _EXAMPLES}
"""The example bots by name: ``random``, ``peel`` and ``pimc`` (the strong, slower reference bot)."""

"""Bot folders: the manifest (``nap-bot.toml``) that says how to build and start a bot.

A bot is a folder holding its code and a manifest::

    name = "mybot"                      # letters, digits, - and _
    version = "1.0"
    command = ["{python}", "bot.py"]    # argv, run in the folder; {python} is this interpreter
    language = "python"                 # optional, for people
    build = ["cc", "-O2", "-o", "bot", "bot.c"]   # optional, run once by check and submit

The referee's address and the bot's token reach the process in the environment
(``NAP_REFEREE``, ``NAP_TOKEN``). The content hash covers every file of the folder, so a
changed bot is a new version and old results stay with the old one.
"""

from __future__ import annotations

import hashlib
import re
import sys
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tournaments.errors import ManifestError

if TYPE_CHECKING:
    from pathlib import Path

MANIFEST = "nap-bot.toml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
SKIPPED = frozenset({"__pycache__", ".git", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"})
"""Folders the content hash leaves out: version control, caches and build products."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """A bot folder's manifest, validated. ``command`` and ``build`` are argv lists."""

    folder: Path
    name: str
    version: str
    command: tuple[str, ...]
    language: str | None = None
    build: tuple[str, ...] | None = None

    def argv(self) -> tuple[str, ...]:
        """The command with ``{python}`` replaced by the running interpreter."""
        return tuple(part.replace("{python}", sys.executable) for part in self.command)

    def build_argv(self) -> tuple[str, ...] | None:
        """The build command, interpreter substituted, or None."""
        if self.build is None:
            return None
        return tuple(part.replace("{python}", sys.executable) for part in self.build)


def read_manifest(folder: Path) -> Manifest:
    """Read and validate ``folder/nap-bot.toml``."""
    if not folder.is_dir():
        msg = f"{folder}: not a folder (a bot is a folder with a {MANIFEST})"
        raise ManifestError(msg)
    path = folder / MANIFEST
    if not path.is_file():
        msg = f"{folder}: no {MANIFEST} in this folder (create one with 'nap bot new NAME')"
        raise ManifestError(msg)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        msg = f"{path}: not valid TOML: {exc}"
        raise ManifestError(msg) from None
    for field in ("name", "version", "command"):
        if field not in data:
            msg = f"{path}: missing field {field!r}"
            raise ManifestError(msg)
    name, version = data.pop("name"), data.pop("version")
    if not isinstance(name, str) or not _NAME.match(name):
        msg = f"{path}: field 'name' must be 1-40 letters, digits, '-' or '_', got {name!r}"
        raise ManifestError(msg)
    if not isinstance(version, str | int | float) or not str(version).strip():
        msg = f"{path}: field 'version' must be a non-empty string"
        raise ManifestError(msg)
    command = _argv(data.pop("command"), path, "command")
    build = _argv(data.pop("build"), path, "build") if "build" in data else None
    language = data.pop("language", None)
    if language is not None and not isinstance(language, str):
        msg = f"{path}: field 'language' must be a string"
        raise ManifestError(msg)
    if data:
        msg = f"{path}: unknown field {next(iter(data))!r}"
        raise ManifestError(msg)
    return Manifest(folder.resolve(), name, str(version), command, language, build)


def _argv(value: object, path: Path, field: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        msg = f"{path}: field {field!r} must be a non-empty list of strings (argv)"
        raise ManifestError(msg)
    return tuple(value)


def content_hash(folder: Path) -> str:
    """SHA-256 over every file's relative path and bytes, in path order (caches skipped)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if SKIPPED.intersection(relative.parts):
            continue
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


BOT_TEMPLATE = '''#!/usr/bin/env python3
"""{name}: a Nap bot. Edit bid() and play(); run it with 'nap bot check .'."""

from clients.sdk import Bot, run
from referee.rules import PASS, Bid, Card, SeatView


class {cls}(Bot):
    """A starting point: a cautious bidder that plays its lowest legal card."""

    def bid(self, view: SeatView) -> Bid:
        """Three when it holds three cards of one suit headed by the Ace (and may bid it), else pass."""
        for suit in {{card.suit for card in view.hand}}:
            cards = [card for card in view.hand if card.suit is suit]
            strong = len(cards) >= 3 and max(card.rank for card in cards) == 14
            if strong and Bid("three") in view.legal_actions:
                return Bid("three")
        return PASS

    def play(self, view: SeatView) -> Card:
        """The lowest legal card, by rank, ties broken by suit."""
        cards = [action for action in view.legal_actions if isinstance(action, Card)]
        return min(cards, key=lambda card: (card.rank, card.suit))


if __name__ == "__main__":
    run({cls}, name="{name}", version="0.1")
'''


def scaffold(parent: Path, name: str) -> Path:
    """Create ``parent/name`` with a manifest and a working Python bot; refuse to overwrite."""
    if not _NAME.match(name):
        msg = f"bot name must be 1-40 letters, digits, '-' or '_', got {name!r}"
        raise ManifestError(msg)
    folder = parent / name
    if folder.exists():
        msg = f"{folder} already exists"
        raise ManifestError(msg)
    folder.mkdir(parents=True)
    cls = "".join(part.capitalize() for part in re.split(r"[-_]", name)) + "Bot"
    script = folder / "bot.py"
    script.write_text(BOT_TEMPLATE.format(name=name, cls=cls), encoding="utf-8")
    # A program, like its shebang says (so linters take it for a script, not a module of a
    # package without __init__.py): executable by whoever may read it, as `chmod +x` does.
    mode = script.stat().st_mode
    script.chmod(mode | (mode & 0o444) >> 2)
    (folder / MANIFEST).write_text(
        f'name = "{name}"\nversion = "0.1"\nlanguage = "python"\ncommand = ["{{python}}", "bot.py"]\n',
        encoding="utf-8",
    )
    return folder
